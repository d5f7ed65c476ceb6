package cmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
)

// bakeSet is what a bake places: the lock, the files of its jars and,
// for a lock with wheels, of its wheels and where their target came from.
type bakeSet struct {
	lock   *lock.File
	jars   lock.Jars
	wheels lock.Jars // nil: the lock has no wheels
	// targetFrom is jsondoc.BakePython.TargetFrom: "flags", "image REF"
	// or "lock".
	targetFrom string
}

// resolveBakeSet gets the set a bake places, both halves (bake image,
// bake s3). Without a Python flag it is resolveLockAndJars, except that a
// lock with wheels, read alone, also gives its wheels (from the cache, or
// fetched by their digests). With --py-requirements both halves are
// resolved (pipeline.ResolveWithPython, the one lock written to --lock)
// for the target of --python-version and --python-platform, else of
// image (the job's image: its python3, C library and architecture; ""
// for none), else the one --lock records; else 64. what names the command
// in errors; lopts reach image.
func resolveBakeSet(ctx context.Context, f *resolveFlags, fs *pflag.FlagSet, what string, args []string, rep *progress.Reporter, image string, lopts []layers.Option) (*bakeSet, error) {
	if !f.python.set() {
		req, err := f.bakeRequest(args)
		if err != nil {
			return nil, err
		}
		if len(req.Packages) == 0 {
			lf, err := lock.Read(req.LockPath)
			if err != nil {
				return nil, err
			}
			ropts := []resolver.Option{resolver.WithLogger(rep), resolver.WithProgress(rep)}
			if len(lf.Wheels()) == 0 {
				// pipeline.LockOrResolve's locked path, without reading
				// the lock again.
				return &bakeSet{lock: lf, jars: pipeline.LockedJars(lf, req, ropts...)}, nil
			}
			py := &pipeline.PythonRequest{UserAgent: repo.UserAgent(buildVersion()), Log: rep}
			return &bakeSet{lock: lf, jars: pipeline.LockedJars(pipeline.JarHalf(lf), req, ropts...),
				wheels: pipeline.LockedWheels(lf, req, py), targetFrom: "lock"}, nil
		}
		lf, jars, err := pipeline.LockOrResolve(ctx, req, rep)
		if err != nil {
			return nil, err
		}
		return &bakeSet{lock: lf, jars: jars}, nil
	}
	req, err := f.lockRequest(fs, what, args...)
	if err != nil {
		return nil, err
	}
	from := "flags"
	py, err := f.pythonRequestWith(req.MaxRetryWait, func(p pythonFlags) (string, string, error) {
		if image != "" {
			from = "image " + image
			return imagePythonTarget(ctx, image, lopts)
		}
		if v, tag, ok := lockPythonTarget(f.lock); ok {
			from = "lock"
			return v, tag, nil
		}
		return "", "", exitcode.Errorf(exitcode.Usage, "--py-requirements %s: %s has no image to read the wheels' target from, and no --lock that records one: give --python-version (the job image's python3 major.minor: docker run IMAGE python3 -V) and --python-platform (its glibc and machine as a tag, e.g. manylinux_2_36_x86_64: docker run IMAGE ldd --version)", p.requirements, what)
	})
	if err != nil {
		return nil, err
	}
	py.Log = rep
	rep.Printf("python %s, %s (target from %s)", py.Version, py.Platform, from)
	res, err := pipeline.ResolveWithPython(ctx, req, py, resolver.WithLogger(rep), resolver.WithProgress(rep))
	if err != nil {
		return nil, err
	}
	if req.LockPath != "" && !res.FromLock {
		rep.Printf("lockfile %s written: %d jars, %d wheels, lock %s", req.LockPath, len(res.Lock.Jars()), len(res.Wheels), res.Lock.Hash())
	}
	s := &bakeSet{lock: res.Lock, jars: lock.LocalJars(res.Jars.Paths), targetFrom: from}
	if len(res.Wheels) > 0 {
		s.wheels = lock.LocalJars(res.WheelPaths)
	}
	return s, nil
}

// python is the JSON account of the set's Python half (nil for a lock
// without one); dir and archive say where the wheels went.
func (s *bakeSet) python(dir, archive string) *jsondoc.BakePython {
	in := s.lock.Inputs.Python
	if in == nil && len(s.lock.Wheels()) == 0 {
		return nil
	}
	p := &jsondoc.BakePython{TargetFrom: s.targetFrom, Dir: dir, Archive: archive, Wheels: []jsondoc.BakedWheel{}}
	if in != nil {
		p.Version = in.Version
		if len(in.Platforms) > 0 {
			p.Platform = in.Platforms[0]
		}
	}
	for _, w := range s.lock.Wheels() {
		p.Wheels = append(p.Wheels, jsondoc.BakedWheel{Name: w.Name, Version: w.Version, File: w.File, Sha256: w.Sha256, Size: w.Size})
	}
	return p
}

// printBakePython prints a bake's Python half on stderr: the target and
// where the wheels went (where: "in DIR, on the image's PYTHONPATH").
func printBakePython(w io.Writer, p *jsondoc.BakePython, where string, verbose bool) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "python %s (%s, target from %s): %d wheel(s) %s\n", p.Version, p.Platform, p.TargetFrom, len(p.Wheels), where)
	if verbose {
		for _, wh := range p.Wheels {
			fmt.Fprintf(w, "  %s\n", wh.File)
		}
	}
}
