// Package pipeline is what prebake does before anything runs: resolve a
// submission's packages (or find their set in a store by its lock), bake
// the jars into an image or a store, and rewrite the spark-submit command
// line so that Spark resolves nothing at run time.
//
// It is written over exported options (resolver.Request, s3store and
// layers options), so that cmd only maps flags and prebake.yaml onto them,
// calls it and prints; its errors carry errdefs kinds and name no flag.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// S3AWarning is the text of the warning (rewrite.WarnS3AURLs) Prepare adds
// to its result's warnings when a store's URLs are s3a:// ones.
const S3AWarning = "s3a:// URLs need hadoop-aws and the AWS SDK bundle in the image, and S3 credentials for Spark (spark.hadoop.fs.s3a.*)"

// Options configure Prepare.
type Options struct {
	// Request is the resolution request of the caller's own inputs; the
	// submission's packages, repositories and excludes come first.
	// Request.LockPath and Request.Frozen also drive the store-first path.
	Request resolver.Request
	// CacheDir is the cache directory as given ("" is the default); the
	// rewrite's work files and the layer cache live under it.
	CacheDir string
	// Target, when set, is where the resolved jars are put so that a
	// driver that does not run here reads them: an ImageTarget, a
	// StoreTarget, or another JarTarget. nil: only local paths.
	Target JarTarget
	// Reporter gets the steps, warnings and progress.
	Reporter *progress.Reporter
	// LocalSparkJars, when set, is the jars directory of the Spark that
	// runs the driver here ($SPARK_HOME/jars): the resolved jars are
	// checked against it as a bake checks them against its base (a
	// directory without jars is not checked).
	LocalSparkJars string
	// Strict fails Prepare (layers.ErrStrict, kind Invalid) on a warning
	// of the local check, before anything is pushed or run (an
	// ImageTarget has its own Strict for its bake).
	Strict bool
	// StrictKinds are the warning kinds Strict fails on
	// (layers.ParseStrict); nil is layers.StrictDefault.
	StrictKinds []string
	// Memo, when set, keeps what Prepare resolved and baked for a set of
	// packages and base images: the next submission with the same ones
	// (of a batch, with the same Options) is only rewritten. nil: none.
	Memo *Memo
	// Python, when set, is the Python half of the request: its wheels go
	// into the one lock with the jars and are shipped with them (the
	// target's image or archive; unpacked in the cache for a driver that
	// runs here). nil: jars only.
	Python *PythonRequest
	// RewriteOptions are added to the rewrite's own (e.g.
	// rewrite.WithPythonApps for the Python programs a run executes).
	// nil: none.
	RewriteOptions []rewrite.Option
}

// Memo is Prepare's memory of the jars it resolved and baked, by the
// submission's packages, deploy mode and images; safe for concurrent use.
type Memo struct {
	mu sync.Mutex
	m  map[memoKey]*prepared
}

type memoKey struct {
	pkgs                                submit.Packages
	deployMode, image, driver, executor string
}

// prepared is the part of Prepare that does not depend on the rest of
// the command line.
type prepared struct {
	jars         *rewrite.Jars
	opts         []rewrite.Option
	checks, late []rewrite.Warning
	sparkVersion string
}

func keyOf(sub *submit.Submission) memoKey {
	conf := func(k string) string { v, _, _ := sub.Conf(k); return v }
	return memoKey{sub.Packages(), sub.DeployMode(), conf("spark.kubernetes.container.image"),
		conf("spark.kubernetes.driver.container.image"), conf("spark.kubernetes.executor.container.image")}
}

// Result is what Prepare made: the rewritten command line and what the bake
// learnt about the images it will run.
type Result struct {
	*rewrite.Result
	// DriverSparkVersion is the Spark version of the driver's baked image as
	// its base's jars say (spark-core_*.jar; layers.Result.SparkVersion),
	// on a bake and on a bake-cache hit; "" when no image was baked or its
	// base has no spark-core jar.
	DriverSparkVersion string
}

// Prepare is submit's resolve → bake (store or image) → rewrite of sub (a
// command line loaded once with submit.LoadSubmission). The result's Args
// are the spark-submit arguments to run, and its Submission the same loaded
// (what a submit.Backend runs, without parsing them again); its warnings
// are for the caller to print.
func Prepare(ctx context.Context, sub *submit.Submission, o Options) (*Result, error) {
	var p *prepared
	if o.Memo != nil {
		// Calls sharing a Memo run one at a time: a second submission with
		// the same key waits for the first's resolve and bake rather than
		// repeating them.
		o.Memo.mu.Lock()
		defer o.Memo.mu.Unlock()
		p = o.Memo.m[keyOf(sub)]
	}
	if p == nil {
		var err error
		if p, err = resolveAndBake(ctx, sub, o); err != nil {
			return nil, err
		}
		if o.Memo != nil {
			if o.Memo.m == nil {
				o.Memo.m = map[memoKey]*prepared{}
			}
			o.Memo.m[keyOf(sub)] = p
		}
	}
	opts := append([]rewrite.Option{rewrite.WithWorkDir(RewriteWorkDir(o.CacheDir))}, p.opts...)
	opts = append(opts, o.RewriteOptions...)
	rw, err := rewrite.Apply(ctx, sub, p.jars, opts...)
	if err != nil {
		return nil, err
	}
	rw.Warnings = append(append(append([]rewrite.Warning(nil), p.checks...), rw.Warnings...), p.late...)
	return &Result{Result: rw, DriverSparkVersion: p.sparkVersion}, nil
}

// resolveAndBake is the part of Prepare before the rewrite: the jars
// (from the target's set, or resolved and placed) and the rewrite's
// options.
func resolveAndBake(ctx context.Context, sub *submit.Submission, o Options) (*prepared, error) {
	p := &prepared{}
	var pl *Placed
	var hash string
	var err error
	if o.Python == nil && !lockHasWheels(o.Request.LockPath) { // a set with wheels is resolved: its wheels are unpacked here or baked
		if pl, hash, err = findFirst(ctx, o, sub); err != nil {
			return nil, err
		}
	}
	if pl == nil {
		s, err := resolveSubmission(ctx, o.Request, sub.Packages(), o.Python, o.Reporter)
		if err != nil {
			return nil, err
		}
		if s != nil {
			p.jars = &rewrite.Jars{Local: s.jarPaths, LockHash: s.lock.Hash()}
			if p.checks, err = checkLocalSpark(o, s.jars); err != nil {
				return nil, err
			}
			if p.jars.Python, err = shipPython(ctx, sub, o.Request.CacheDir, s, o.Target == nil, o.Reporter); err != nil {
				return nil, err
			}
			if o.Target != nil {
				in := PlaceInput{Lock: s.lock, Jars: lock.LocalJars(s.jars.Paths), CacheDir: o.CacheDir, Reporter: o.Reporter}
				if len(s.wheelPaths) > 0 {
					in.Wheels = lock.LocalJars(s.wheelPaths)
				}
				if pl, err = o.Target.Place(ctx, sub, in); err != nil {
					return nil, err
				}
			}
		}
	} else {
		p.jars = &rewrite.Jars{LockHash: hash}
	}
	if pl != nil {
		p.jars.Cluster, p.jars.From, p.jars.Conf = pl.Cluster, pl.From, pl.Conf
		withPlacedPython(p.jars.Python, pl)
		p.checks = append(p.checks, pl.Warnings...)
		p.opts, p.late, p.sparkVersion = append(p.opts, pl.RewriteOptions...), pl.Late, pl.SparkVersion
	}
	// The line of the baked base's jars, else the line the caller was told
	// (its Ivy steered the resolution too).
	if v := p.sparkVersion; v != "" || o.Request.SparkVersion != "" {
		if v == "" {
			v = o.Request.SparkVersion
		}
		p.opts = append(p.opts, rewrite.WithSparkVersion(v))
	}
	return p, nil
}

// findFirst is the path of a pod with no route to Maven: in cluster mode
// with a target that finds sets (a store) and a lock that matches the
// inputs, the set it already holds (named by the lock hash) gives the jar
// URLs (one GET for a store), and no jar is fetched or resolved here. It
// returns nil when that path does not apply or the target does not hold
// the set yet, else the set and its lock hash.
func findFirst(ctx context.Context, o Options, sub *submit.Submission) (*Placed, string, error) {
	f, ok := o.Target.(SetFinder)
	if !ok || o.Request.LockPath == "" || sub.DeployMode() != "cluster" {
		return nil, "", nil
	}
	req, err := RequestFor(o.Request, sub.Packages())
	if err != nil || len(req.Packages) == 0 {
		return nil, "", err
	}
	lf, err := resolver.LockFor(ctx, req, resolver.WithLogger(o.Reporter))
	if err != nil {
		if o.Request.Frozen && errors.Is(err, resolver.ErrStaleLock) {
			return nil, "", err
		}
		return nil, "", nil
	}
	rep := o.Reporter
	pl, err := f.Find(ctx, lf)
	switch {
	case errors.Is(err, ErrNotHeld):
		rep.Printf("set %s is not in the %s yet: resolving and uploading it", lf.Hash(), targetNoun(o.Target))
		return nil, "", nil
	case err != nil:
		return nil, "", err
	}
	rep.Printf("set %s found in the %s: %d jars, nothing to fetch", lf.Hash(), targetNoun(o.Target), len(pl.Cluster))
	return pl, lf.Hash(), nil
}

// targetNoun names a target in findFirst's lines: its String, else
// "target".
func targetNoun(t JarTarget) string {
	if n, ok := t.(fmt.Stringer); ok {
		return n.String()
	}
	return "target"
}

// checkLocalSpark checks the resolved jars against o.LocalSparkJars, the
// Spark that runs the driver here, as a bake checks them against its base:
// its warnings, or with o.Strict the error. A directory without jars (no
// Spark distribution there) is not checked.
func checkLocalSpark(o Options, res *resolver.Result) ([]rewrite.Warning, error) {
	if o.LocalSparkJars == "" {
		return nil, nil
	}
	spark, _ := filepath.Glob(filepath.Join(o.LocalSparkJars, "*.jar"))
	if len(spark) == 0 {
		o.Reporter.Debugf("%s has no jars: the resolved jars are not checked against the local Spark", o.LocalSparkJars)
		return nil, nil
	}
	coords := make([]string, len(res.Lock.Jars()))
	files := make([]string, len(res.Lock.Jars()))
	for i, a := range res.Lock.Jars() {
		coords[i], files[i] = a.Coord, a.File
	}
	r := layers.CheckJars(coords, files, spark, o.LocalSparkJars)
	o.Reporter.Debugf("local Spark %s: Spark %s, Scala %s, %d jars", o.LocalSparkJars, r.BaseSparkVersion, r.BaseScalaBinary, r.BaseJars)
	var kept []layers.Warning
	var ws []rewrite.Warning
	for _, w := range r.Warnings {
		if w.Kind == layers.WarnNoSpark {
			continue
		}
		w.Message = strings.Replace(w.Message, "the base image has", "the local Spark has", 1)
		kept = append(kept, w)
		ws = append(ws, rewrite.Warning{Kind: rewrite.WarnClasspath, Text: "local Spark " + o.LocalSparkJars + ": " + w.Message + " (" + w.Kind + ")"})
	}
	if o.Strict {
		if err := layers.StrictError("local Spark "+o.LocalSparkJars, layers.StrictWarnings(kept, o.StrictKinds), "nothing was run"); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// ResolveJars resolves the packages of a command line (plus those of req)
// and retrieves them for file: paths. It returns nil when there is nothing
// to resolve.
func ResolveJars(ctx context.Context, req resolver.Request, p submit.Packages, rep *progress.Reporter) (*resolver.Result, []string, error) {
	req, err := RequestFor(req, p)
	if err != nil || len(req.Packages) == 0 {
		return nil, nil, err
	}
	res, err := resolver.Resolve(ctx, req, resolver.WithLogger(rep), resolver.WithProgress(rep))
	rep.Wait()
	if err != nil {
		return nil, nil, err
	}
	_, paths, err := blobcache.Retrieve(ctx, res.Lock, req.CacheDir)
	if err != nil {
		return nil, nil, err
	}
	return res, paths, nil
}

// RequestFor is the resolution request of a command line's packages plus
// those of req: the argv's own packages come first, req adds to them. The
// argv's spark.jars.ivySettings and spark.jars.ivy hold one value each:
// req's (IvySettings, IvyHome) must be the same or unset, else the error is
// errdefs.BadArgument, naming the option.
func RequestFor(req resolver.Request, p submit.Packages) (resolver.Request, error) {
	if p.Packages != "" {
		req.Packages = append([]string{p.Packages}, req.Packages...)
	}
	if p.Repositories != "" {
		req.Repositories = append([]string{p.Repositories}, req.Repositories...)
	}
	if p.Excludes != "" {
		req.Excludes = append([]string{p.Excludes}, req.Excludes...)
	}
	for _, kv := range []struct {
		what, option, key string
		dst               *string
		argv              string
	}{{"Ivy settings", "resolver.Request.IvySettings", "spark.jars.ivySettings", &req.IvySettings, p.IvySettings},
		{"Ivy home", "resolver.Request.IvyHome", "spark.jars.ivy", &req.IvyHome, p.Ivy}} {
		switch {
		case kv.argv == "" || kv.argv == *kv.dst:
		case *kv.dst == "":
			*kv.dst = kv.argv
		default:
			return req, errdefs.Optionf(errdefs.BadArgument, kv.option, "%s %s and the command line's %s=%s differ", kv.what, *kv.dst, kv.key, kv.argv)
		}
	}
	return req, nil
}
