// Package outdated lists the newer versions of a lock's direct packages
// (the Maven modules of its inputs, and its direct wheels) on the
// repositories and indexes, and re-locks the jars with the versions
// chosen: the newest of each, or some picked by hand. Kept within the
// lock's (or a base image's) Spark, Scala and Hadoop lines, it lists
// nothing a strict bake would refuse.
package outdated

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
)

// Input is one lock and what to do with it.
type Input struct {
	// LockPath is the lock: read, named in messages and, when re-locking,
	// written again.
	LockPath string
	// Request reaches the repositories (repositories, settings, cache,
	// offline, checksum policy, …). Its Packages, Excludes and Conflict
	// are the lock's, its LockPath and Frozen are ignored. Versions are
	// read fresh (a scratch cache) unless it is Offline.
	Request resolver.Request
	// WithinSparkLine keeps Spark's modules (and versions naming a Spark
	// line) on their Spark line, Hadoop connectors on the lock's Hadoop
	// and Scala-suffixed versions on its Scala.
	WithinSparkLine bool
	// Base is a base image (a registry reference or oci:PATH[:tag]) whose
	// Spark, Scala and Hadoop lines to keep to instead of the lock's (it
	// implies WithinSparkLine); SparkHome is where it keeps Spark ("" is
	// /opt/spark) and BaseOptions reach its registry.
	Base        string
	SparkHome   string
	BaseOptions []layers.Option
	// Latest re-locks with the newest version of every outdated package.
	Latest bool
	// Set re-locks with these versions of direct packages (each must be
	// one), alone or on top of Latest.
	Set []resolver.Coordinate
	// UserAgent is sent to the Python indexes.
	UserAgent string
}

// Report is the answer: the lock's direct packages, each with its newer
// versions, and whether the lock was written again.
type Report struct {
	Lock     string    `json:"lock"`
	Packages []Package `json:"packages"`
	Written  bool      `json:"written"`
	LockHash string    `json:"lockHash"`
	// Jars is the number of jars of the lock written (0 when none was).
	Jars int `json:"-"`
	// UnlistedWheels is the number of the lock's wheels left out because
	// the request is offline (their index is not asked).
	UnlistedWheels int `json:"-"`
}

// Package is one direct package: Module is "group:artifact" for a Maven
// module, "pypi/<name>" for a wheel. Latest is "" when none is newer;
// Newer is oldest first.
type Package struct {
	Module  string   `json:"module"`
	Current string   `json:"current"`
	Latest  string   `json:"latest"`
	Newer   []string `json:"newer"`
}

// PythonHalfError is a re-lock asked of a lock with wheels: re-locking
// writes jars only, and would drop them.
type PythonHalfError struct {
	Lock   string
	Wheels int
}

func (e *PythonHalfError) Error() string {
	return fmt.Sprintf("re-locking writes jars only, and %s has a Python half (%d wheels) that it would drop", e.Lock, e.Wheels)
}

// Logger receives progress lines and warnings; it is never given secrets.
type Logger interface {
	Printf(format string, args ...any)
}

// Option configures Run.
type Option func(*options) error

type options struct {
	log      Logger
	progress resolver.Progress
}

type discard struct{}

func (discard) Printf(string, ...any) {}

// WithLogger sends progress lines and warnings to l. The default discards
// them.
func WithLogger(l Logger) Option {
	return func(o *options) error {
		if l != nil {
			o.log = l
		}
		return nil
	}
}

// WithProgress reports the re-lock's downloads to p. The default reports
// none.
func WithProgress(p resolver.Progress) Option {
	return func(o *options) error { o.progress = p; return nil }
}

// makeOptions sets the defaults, then applies opts; the first option error
// stops it.
func makeOptions(opts []Option) (*options, error) {
	o := &options{log: discard{}}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Run reads the lock, lists the newer versions of its direct packages and,
// with Latest or Set, re-locks with the versions chosen (the lock's
// excludes and conflict mode kept). A bad Set is errdefs.BadArgument
// (option "outdated.Input.Set"); a re-lock of a lock with wheels is a
// *PythonHalfError of kind errdefs.BadArgument.
func Run(ctx context.Context, in Input, opts ...Option) (*Report, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	lf, err := lock.Read(in.LockPath)
	if err != nil {
		return nil, err
	}
	relock := in.Latest || len(in.Set) > 0
	if lf.HasPython() && relock {
		return nil, errdefs.New(errdefs.BadArgument, &PythonHalfError{Lock: in.LockPath, Wheels: len(lf.Wheels())})
	}
	var direct []resolver.Coordinate
	for _, p := range lf.Inputs.Packages {
		cs, err := resolver.ParseCoordinates(p)
		if err != nil {
			return nil, fmt.Errorf("lockfile %s: packages: %w", in.LockPath, err)
		}
		direct = append(direct, cs...)
	}
	chosen := map[string]string{} // g:a → version, from Set
	for _, c := range in.Set {
		m := c.Group + ":" + c.Artifact
		if !slices.ContainsFunc(direct, func(d resolver.Coordinate) bool { return d.Group+":"+d.Artifact == m }) {
			return nil, errdefs.Optionf(errdefs.BadArgument, "outdated.Input.Set", "%s: %s is not a direct package of %s", c, m, in.LockPath)
		}
		chosen[m] = c.Version
	}

	req := in.Request
	req.LockPath, req.Frozen = "", false
	// Fresh metadata: the cache's index would give what it saw last.
	// Offline, what the cache has is all there is.
	vreq := req
	if !req.Offline {
		tmp, err := os.MkdirTemp("", "prebake-outdated-")
		if err != nil {
			return nil, errdefs.New(errdefs.CantWrite, err)
		}
		defer os.RemoveAll(tmp)
		vreq.CacheDir = tmp
	}
	// A lock of wheels alone has no Maven package to ask about.
	var src resolver.Source
	if len(direct) > 0 || !lf.HasPython() {
		if src, err = resolver.NewSource(ctx, vreq, resolver.WithLogger(o.log)); err != nil {
			return nil, err
		}
	}
	l := lines{}
	if in.WithinSparkLine || in.Base != "" {
		if l, err = linesOf(ctx, lf, in, o.log); err != nil {
			return nil, err
		}
	}
	// A version changes nothing of an artifact's Scala suffix: say so.
	for _, d := range direct {
		if m := artifactScalaRe.FindStringSubmatch(d.Artifact); m != nil && l.scala != "" && m[1] != l.scala {
			o.log.Printf("warning: %s:%s is built for Scala %s but the base has Scala %s; outdated changes versions, not artifacts: use %s_%s", d.Group, d.Artifact, m[1], l.scala, strings.TrimSuffix(d.Artifact, "_"+m[1]), l.scala)
		}
	}
	res := &Report{Lock: in.LockPath, Packages: []Package{}}
	for _, d := range direct {
		vs, err := src.Versions(ctx, d.Group, d.Artifact)
		if err != nil {
			return nil, err
		}
		newer := newerVersions(d.Group, d.Artifact, d.Version, vs, l)
		p := Package{Module: d.Group + ":" + d.Artifact, Current: d.Version, Newer: newer}
		if len(newer) > 0 {
			p.Latest = newer[len(newer)-1]
		}
		res.Packages = append(res.Packages, p)
	}
	if lf.HasPython() {
		wheels, unlisted, err := newerWheels(ctx, lf, req.Offline, in.UserAgent, o.log)
		if err != nil {
			return nil, err
		}
		res.Packages, res.UnlistedWheels = append(res.Packages, wheels...), unlisted
	}
	if !relock {
		return res, nil
	}

	pick := map[string]string{}
	for _, p := range res.Packages {
		if in.Latest && p.Latest != "" {
			pick[p.Module] = p.Latest
		}
	}
	for m, v := range chosen {
		pick[m] = v
	}
	req.Packages, req.Excludes, req.Conflict, req.LockPath = withVersions(lf.Inputs.Packages, pick), lf.Inputs.Excludes, lf.Inputs.Conflict, in.LockPath
	ropts := []resolver.Option{resolver.WithLogger(o.log)}
	if o.progress != nil {
		ropts = append(ropts, resolver.WithProgress(o.progress))
	}
	r, err := resolver.Resolve(ctx, req, ropts...)
	if err != nil {
		return nil, err
	}
	res.Written, res.LockHash, res.Jars = true, r.Lock.Hash(), len(r.Lock.Jars())
	return res, nil
}

// withVersions is the lock's packages (each a comma-separated list of
// coordinates, as read) with the versions of pick (g:a → version).
func withVersions(packages []string, pick map[string]string) []string {
	var pkgs []string
	for _, p := range packages {
		cs, _ := resolver.ParseCoordinates(p)
		parts := make([]string, len(cs))
		for i, co := range cs {
			if v, ok := pick[co.Group+":"+co.Artifact]; ok {
				co.Version = v
			}
			parts[i] = co.String()
		}
		pkgs = append(pkgs, strings.Join(parts, ","))
	}
	return pkgs
}
