package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/coordpart"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/sitepkgs"
	"github.com/prebake/prebake/internal/wheel"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	blobcache "github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// resolvedSet is a resolution of a submission's set: the one lock (both
// halves), the jar half's result, and the local files of each.
type resolvedSet struct {
	lock       *lock.File
	jars       *resolver.Result // the jar half: its Lock holds the jars only
	jarPaths   []string         // retrieved, in lock order
	wheelPaths []string         // the cache's blobs, in lock order
}

// resolveSubmission resolves the packages of a command line (plus those of req)
// and, when py is set, its Python half into one lock (ResolveWithPython),
// and retrieves the jars for file: paths. It returns nil when there is
// nothing to resolve.
func resolveSubmission(ctx context.Context, req resolver.Request, p submit.Packages, py *PythonRequest, rep *progress.Reporter) (*resolvedSet, error) {
	req, err := RequestFor(req, p)
	if err != nil {
		return nil, err
	}
	if py == nil {
		// A lock with wheels is the Python input itself.
		if s, err := lockedSet(ctx, req, rep); s != nil || err != nil {
			return s, err
		}
	}
	if len(req.Packages) == 0 && py == nil {
		return nil, nil
	}
	if py != nil && py.Log == nil && rep != nil {
		c := *py
		c.Log = rep
		py = &c
	}
	res, err := ResolveWithPython(ctx, req, py, resolver.WithLogger(rep), resolver.WithProgress(rep))
	rep.Wait()
	if err != nil {
		return nil, err
	}
	s := &resolvedSet{lock: res.Lock, jars: res.Jars, wheelPaths: res.WheelPaths}
	if len(res.Jars.Lock.Jars()) > 0 {
		if _, s.jarPaths, err = blobcache.Retrieve(ctx, res.Jars.Lock, req.CacheDir); err != nil {
			return nil, err
		}
	}
	if py != nil {
		rep.Printf("python: %s (lock %s)", PythonSummary(res.Lock), res.Lock.Hash())
	}
	return s, nil
}

// lockedSet is the set of the lock at req.LockPath when it has wheels and
// no Python input is given: its jar half checked (or resolved again) as a
// jar-only lock's, its wheels from the cache by their digests (fetched by
// the lock's file names when missing: LockedWheels). A jar half resolved
// again is written back with the lock's wheels. Nil when there is no
// such lock.
func lockedSet(ctx context.Context, req resolver.Request, rep *progress.Reporter) (*resolvedSet, error) {
	old, err := readLock(req.LockPath)
	if err != nil || old == nil || len(old.Wheels()) == 0 {
		return nil, nil // no lock with wheels: the jar-only path reports any error
	}
	opts := []resolver.Option{resolver.WithLogger(rep), resolver.WithProgress(rep)}
	jars, err := resolveJarHalf(ctx, req, old, rep, opts)
	rep.Wait()
	if err != nil {
		return nil, err
	}
	lf := old
	if jars.Lock.Hash() != JarHalf(old).Hash() || jars.Lock.Inputs.InputsHash != JarHalf(old).Inputs.InputsHash {
		lf = &lock.File{Inputs: jars.Lock.Inputs, Artifacts: append(slices.Clone(jars.Lock.Artifacts), old.Wheels()...)}
		lf.Inputs.Python = old.Inputs.Python
		lf.Normalize()
		if err := lf.Check(); err != nil {
			return nil, err
		}
		if err := lock.Write(req.LockPath, lf); err != nil {
			return nil, err
		}
	}
	req.CacheDir = blobcache.Dir(req.CacheDir)
	paths, err := LockedWheels(lf, req, &PythonRequest{Log: rep})(ctx)
	if err != nil {
		return nil, err
	}
	s := &resolvedSet{lock: lf, jars: jars, wheelPaths: paths}
	if len(jars.Lock.Jars()) > 0 {
		if _, s.jarPaths, err = blobcache.Retrieve(ctx, jars.Lock, req.CacheDir); err != nil {
			return nil, err
		}
	}
	rep.Printf("python: %s from lock %s", PythonSummary(lf), lf.Hash())
	return s, nil
}

// lockHasWheels reports whether the lock at path (none: "") holds wheels.
func lockHasWheels(path string) bool {
	lf, err := readLock(path)
	return err == nil && lf != nil && len(lf.Wheels()) > 0
}

// DriverHere reports whether the driver of sub runs on this host: local
// masters, and client mode everywhere (Spark Connect's driver is the
// server's).
func DriverHere(sub *submit.Submission) bool {
	kind := submit.ClusterKind(sub.Master())
	return kind != submit.ClusterConnect && (kind == submit.ClusterLocal || sub.DeployMode() != "cluster")
}

// LocalSitePackages unpacks the wheels of lf (their cache blobs at paths,
// index for index of lf.Wheels(), each checked against the lock) into one
// site-packages tree under the cache, named by the wheels' digests, and
// returns its absolute directory: what a driver that runs here (and local
// mode's Python workers) put on PYTHONPATH. The tree is written aside and
// renamed into place (sitepkgs.Materialize): a directory that exists is
// whole, and is reused without a read.
func LocalSitePackages(ctx context.Context, cacheDir string, lf *lock.File, paths []string) (string, error) {
	ws, err := sitepkgs.WheelsOf(lf, paths)
	if err != nil {
		return "", err
	}
	dir, err := filepath.Abs(cachedir.At(blobcache.Dir(cacheDir)).SitePackages(wheelsKey(lf.Wheels())))
	if err != nil {
		return "", errdefs.New(errdefs.CantWrite, err)
	}
	if err := sitepkgs.Materialize(ctx, ws, dir, wheel.DefaultEpoch); err != nil {
		return "", err
	}
	return dir, nil
}

// wheelsKey names a set of wheels by content: the sha256 of their sorted
// file names and digests.
func wheelsKey(ws []lock.Artifact) string {
	lines := make([]string, 0, len(ws))
	for _, w := range ws {
		lines = append(lines, w.File+"\x00"+w.Sha256+"\n")
	}
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// shipPython is the rewrite's Python half of a resolved set for sub: its
// wheel count; when the driver runs here, their unpacked directory in the
// cache; and, with no cluster target (noTarget) where Spark ships a local
// archive itself (LocalArchiveShips), the settings of a site-packages
// archive built in the cache. Nil for a set without wheels.
func shipPython(ctx context.Context, sub *submit.Submission, cacheDir string, s *resolvedSet, noTarget bool, rep *progress.Reporter) (*rewrite.Python, error) {
	n := len(s.lock.Wheels())
	if n == 0 {
		return nil, nil
	}
	p := &rewrite.Python{Wheels: n}
	if sub != nil && DriverHere(sub) {
		dir, err := LocalSitePackages(ctx, cacheDir, s.lock, s.wheelPaths)
		if err != nil {
			return nil, err
		}
		rep.Debugf("python: %d wheels unpacked at %s (the driver here imports them)", n, dir)
		p.LocalDir = dir
	}
	if noTarget && sub != nil && LocalArchiveShips(sub) {
		file, err := LocalArchive(ctx, cacheDir, s.lock, s.wheelPaths)
		if err != nil {
			return nil, err
		}
		rel := "./" + s3store.ArchiveName
		p.From = "local archive " + file
		p.Conf = [][2]string{
			{"spark.archives", "file://" + file + "#" + s3store.ArchiveName},
			{"spark.executorEnv.PYTHONPATH", rel},
			{"spark.yarn.appMasterEnv.PYTHONPATH", rel},
		}
	}
	return p, nil
}

// LocalArchiveShips reports whether Spark itself ships a local archive of
// sub's spark.archives to the executors (and the driver that needs it):
// YARN in either mode (it uploads it), and client mode elsewhere (the
// driver serves it); not local mode (nothing to ship), Spark Connect, or
// cluster mode on K8s, standalone and Mesos (no one uploads it).
func LocalArchiveShips(sub *submit.Submission) bool {
	switch submit.ClusterKind(sub.Master()) {
	case submit.ClusterLocal, submit.ClusterConnect:
		return false
	case submit.ClusterYARN:
		return true
	}
	return sub.DeployMode() != "cluster"
}

// LocalArchive writes the site-packages archive of lf's wheels (their
// cache blobs at paths; s3store.BuildArchive's bytes, the store's) into
// the cache, named by the wheels (<cache>/python/archives/<key>/), and
// returns its absolute path; an archive already there is reused. It is
// written aside and renamed into place.
func LocalArchive(ctx context.Context, cacheDir string, lf *lock.File, paths []string) (string, error) {
	dir, err := filepath.Abs(cachedir.At(blobcache.Dir(cacheDir)).PythonArchive(wheelsKey(lf.Wheels())))
	if err != nil {
		return "", errdefs.New(errdefs.CantWrite, err)
	}
	file := filepath.Join(dir, s3store.ArchiveFile)
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", errdefs.New(errdefs.CantWrite, err)
	}
	tmp, err := os.MkdirTemp(dir, ".tmp-")
	if err != nil {
		return "", errdefs.New(errdefs.CantWrite, err)
	}
	defer os.RemoveAll(tmp)
	part := filepath.Join(tmp, s3store.ArchiveFile)
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", errdefs.New(errdefs.CantWrite, err)
	}
	stage := filepath.Join(tmp, "stage")
	if err := os.Mkdir(stage, 0o700); err != nil {
		f.Close()
		return "", errdefs.New(errdefs.CantWrite, err)
	}
	_, _, err = s3store.BuildArchive(ctx, lf, paths, stage, f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = errdefs.New(errdefs.CantWrite, cerr)
	}
	if err != nil {
		return "", err
	}
	if err := os.Rename(part, file); err != nil {
		return "", errdefs.New(errdefs.CantWrite, err)
	}
	return file, nil
}

// withPlacedPython adds what a target made of the wheels (pl.Python) to p.
func withPlacedPython(p *rewrite.Python, pl *Placed) {
	if p == nil || pl == nil || pl.Python == nil {
		return
	}
	p.Conf, p.InImage, p.From = pl.Python.Conf, pl.Python.InImage, pl.Python.From
}

// checkImagePython checks that the image info (its dev.prebake.python
// annotation) holds every wheel of lf; a missing one is notHeld.
func checkImagePython(ref string, info *layers.Info, lf *lock.File) (*rewrite.Python, error) {
	ws := lf.Wheels()
	if len(ws) == 0 {
		return nil, nil
	}
	var ann layers.PythonAnnotation
	raw, ok := info.Annotations[layers.AnnotationPython]
	if ok {
		if err := json.Unmarshal([]byte(raw), &ann); err != nil {
			return nil, errdefs.Errorf(errdefs.Invalid, "image %s: annotation %s: %v", ref, layers.AnnotationPython, err)
		}
	}
	for _, w := range ws {
		if !slices.Contains(ann.Files, w.File) {
			return nil, notHeld{errdefs.Optionf(errdefs.NotFound, "pipeline.ImageFrom.Ref", "image %s: the image has no wheel %s (its %s lacks it); bake this lock into it first", ref, coordpart.Quote(w.File), layers.AnnotationPython)}
		}
	}
	return &rewrite.Python{Wheels: len(ws), InImage: true, From: "image " + ref}, nil
}

// FindSet is FindJars with the Python half: both halves resolved into one
// lock (py nil: jars only, as FindJars), the jars retrieved and the
// wheels unpacked for a driver that runs here (sub), and the cluster's
// URLs and Python settings the finder holds for the lock (f nil: none).
func FindSet(ctx context.Context, req resolver.Request, py *PythonRequest, sub *submit.Submission, f SetFinder, rep *progress.Reporter) (*rewrite.Jars, error) {
	return findSet(ctx, req, sub.Packages(), py, sub, f, rep)
}

// findSet is FindSet for the packages p (sub nil: no driver runs here).
func findSet(ctx context.Context, req resolver.Request, p submit.Packages, py *PythonRequest, sub *submit.Submission, f SetFinder, rep *progress.Reporter) (*rewrite.Jars, error) {
	s, err := resolveSubmission(ctx, req, p, py, rep)
	if err != nil || s == nil {
		return nil, err
	}
	j := &rewrite.Jars{Local: s.jarPaths, LockHash: s.lock.Hash()}
	if j.Python, err = shipPython(ctx, sub, req.CacheDir, s, f == nil, rep); err != nil {
		return nil, err
	}
	if f == nil {
		return j, nil
	}
	pl, err := f.Find(ctx, s.lock)
	if err != nil {
		return nil, err
	}
	j.Cluster, j.From, j.Conf = pl.Cluster, pl.From, pl.Conf
	withPlacedPython(j.Python, pl)
	return j, nil
}
