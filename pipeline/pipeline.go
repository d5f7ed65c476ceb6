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
	"os"
	"path/filepath"
	"strings"
	"sync"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// S3AWarning is the text of the warning (rewrite.WarnS3AURLs) Prepare adds
// to its result's warnings when a store's URLs are s3a:// ones.
const S3AWarning = "s3a:// URLs need hadoop-aws and the AWS SDK bundle in the image, and S3 credentials for Spark (spark.hadoop.fs.s3a.*)"

// ErrNoBaseImage is returned (kind BadArgument) when an image target is
// given but the submission names no base image to bake the jars into.
var ErrNoBaseImage = errors.New("the spark-submit arguments set no spark.kubernetes.container.image, the base image to bake the jars into")

// Options configure Prepare.
type Options struct {
	// Request is the resolution request of the caller's own inputs; the
	// submission's packages, repositories and excludes come first.
	// Request.LockPath and Request.Frozen also drive the store-first path.
	Request resolver.Request
	// CacheDir is the cache directory as given ("" is the default); the
	// rewrite's work files and the layer cache live under it.
	CacheDir string
	// Store, when set, is the jar store (s3://bucket/prefix or file:///dir)
	// the set is baked to; its URLs, in URLStyle, go in spark.jars.
	Store        string
	StoreOptions []s3store.Option
	URLStyle     s3store.URLStyle
	// StoreConf is the Spark conf the cluster needs to read the store's
	// URLs (an S3-compatible endpoint and path style); a key the user set
	// keeps the user's value.
	StoreConf map[string]string
	// ImageTarget, when set, is where the images with the jars baked in
	// are pushed (one per distinct base image of the submission).
	ImageTarget  string
	LayerOptions []layers.Option
	// SharedLock, when set, is a shared (platform) set: the image bakes put
	// the jars of the lock it has in a layer of their own, the same for
	// every job that has them (layers.BakeInput.Shared).
	SharedLock *lock.File
	// Reporter gets the steps, warnings and progress.
	Reporter *progress.Reporter
	// SparkHome is where the base images keep Spark ("" is /opt/spark),
	// for the bake's check of the jars against it.
	SparkHome string
	// LocalSparkJars, when set, is the jars directory of the Spark that
	// runs the driver here ($SPARK_HOME/jars): the resolved jars are
	// checked against it as a bake checks them against its base (a
	// directory without jars is not checked).
	LocalSparkJars string
	// Strict fails Prepare (layers.ErrStrict, kind Invalid) on a warning
	// of those checks, before anything is pushed or run.
	Strict bool
	// Memo, when set, keeps what Prepare resolved and baked for a set of
	// packages and base images: the next submission with the same ones
	// (of a batch, with the same Options) is only rewritten. nil: none.
	Memo *Memo
	// RewriteOptions are added to the rewrite's own (e.g.
	// rewrite.WithPythonApps for submit --exec). nil: none.
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
	checks       []rewrite.Warning
	sparkVersion string
}

func keyOf(sub *submit.Submission) memoKey {
	conf := func(k string) string { v, _, _ := sub.Conf(k); return v }
	return memoKey{sub.Packages(), sub.DeployMode(), conf("spark.kubernetes.container.image"),
		conf("spark.kubernetes.driver.container.image"), conf("spark.kubernetes.executor.container.image")}
}

// cacheDir is o.CacheDir or the default.
func (o *Options) cacheDir() string {
	if o.CacheDir == "" {
		return blobcache.DefaultDir(os.Getenv)
	}
	return o.CacheDir
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
	cache := o.cacheDir()
	opts := append([]rewrite.Option{rewrite.WithWorkDir(filepath.Join(cachedir.Root(cache), "rewrite"))}, p.opts...)
	opts = append(opts, o.RewriteOptions...)
	jars, checks, sparkVersion := p.jars, append([]rewrite.Warning(nil), p.checks...), p.sparkVersion
	opts = append(opts, rewrite.WithJarSource(rewrite.JarSourceFunc(func(context.Context, submit.Packages) (*rewrite.Jars, error) {
		return jars, nil
	})))
	rw, err := rewrite.ApplySubmission(ctx, sub, opts...)
	if err != nil {
		return nil, err
	}
	rw.Warnings = append(checks, rw.Warnings...)
	if jars != nil && len(jars.Cluster) > 0 && s3aURLs(o) {
		rw.Warnings = append(rw.Warnings, rewrite.Warning{Kind: rewrite.WarnS3AURLs, Text: S3AWarning})
	}
	return &Result{Result: rw, DriverSparkVersion: sparkVersion}, nil
}

// resolveAndBake is the part of Prepare before the rewrite: the jars
// (from the store's set, or resolved and baked) and the image rewrite's
// options.
func resolveAndBake(ctx context.Context, sub *submit.Submission, o Options) (*prepared, error) {
	rep := o.Reporter
	cache := o.cacheDir()
	var opts []rewrite.Option
	jars, err := storeFirst(ctx, o, sub)
	if err != nil {
		return nil, err
	}
	var res *resolver.Result
	var paths []string
	var sparkVersion string
	if jars == nil {
		res, paths, err = ResolveJars(ctx, o.Request, sub.Packages(), rep)
		if err != nil {
			return nil, err
		}
	}
	var checks []rewrite.Warning
	if res != nil {
		jars = &rewrite.Jars{Local: paths, LockHash: res.Lock.Hash()}
		if checks, err = checkLocalSpark(o, res); err != nil {
			return nil, err
		}
		switch {
		case o.ImageTarget != "":
			imgOpts, v, ws, err := bakeImages(ctx, o, sub, res, jars, cache)
			if err != nil {
				return nil, err
			}
			checks = append(checks, ws...)
			opts = append(opts, imgOpts...)
			sparkVersion = v
		case o.Store != "":
			if err := bakeStore(ctx, o, res, jars); err != nil {
				return nil, err
			}
		}
	}
	// The line of the baked base's jars, else the line the caller was told
	// (its Ivy steered the resolution too).
	if v := sparkVersion; v != "" || o.Request.SparkVersion != "" {
		if v == "" {
			v = o.Request.SparkVersion
		}
		opts = append(opts, rewrite.WithSparkVersion(v))
	}
	return &prepared{jars: jars, opts: opts, checks: checks, sparkVersion: sparkVersion}, nil
}

// storeFirst is the path of a pod with no route to Maven: in cluster mode
// with a store and a lock that matches the inputs, a set already in the
// store (named by the lock hash) gives the jar URLs with one GET, and no jar
// is fetched or resolved here. It returns nil when that path does not apply
// or the set is not in the store yet.
func storeFirst(ctx context.Context, o Options, sub *submit.Submission) (*rewrite.Jars, error) {
	if o.Store == "" || o.Request.LockPath == "" || sub.DeployMode() != "cluster" {
		return nil, nil
	}
	req, err := RequestFor(o.Request, sub.Packages())
	if err != nil || len(req.Packages) == 0 {
		return nil, err
	}
	lf, err := resolver.LockFor(ctx, req, resolver.WithLogger(o.Reporter))
	if err != nil {
		if o.Request.Frozen && errors.Is(err, resolver.ErrStaleLock) {
			return nil, err
		}
		return nil, nil
	}
	rep := o.Reporter
	urls, err := s3store.SetURLs(ctx, o.Store, lf.Hash(), o.URLStyle, o.StoreOptions...)
	switch {
	case errors.Is(err, s3store.ErrNotFound) && !errors.Is(err, s3store.ErrNoBucket):
		rep.Printf("set %s is not in the store yet: resolving and uploading it", lf.Hash())
		return nil, nil
	case err != nil:
		return nil, err
	}
	rep.Printf("set %s found in the store: %d jars, nothing to fetch", lf.Hash(), len(urls))
	return &rewrite.Jars{Cluster: urls, From: "store " + redact.URL(o.Store), LockHash: lf.Hash(), Conf: o.StoreConf}, nil
}

// bakeStore uploads the set to the store and sets the cluster URLs.
func bakeStore(ctx context.Context, o Options, res *resolver.Result, jars *rewrite.Jars) error {
	rep := o.Reporter
	st, err := s3store.Open(ctx, o.Store, o.StoreOptions...)
	if err != nil {
		return err
	}
	baked, err := st.Bake(ctx, res.Lock, lock.LocalJars(res.Paths))
	rep.Wait()
	if err != nil {
		return err
	}
	// The bake already holds the set's manifest: no second GET.
	urls, err := st.URLs(ctx, baked.Manifest, o.URLStyle)
	if err != nil {
		return err
	}
	jars.Cluster, jars.From, jars.Conf = urls, "store "+redact.URL(o.Store), o.StoreConf
	return nil
}

// s3aURLs reports whether the store's URLs are s3a:// ones (an S3 store,
// URLStyle s3a), which Spark reads only with hadoop-aws (S3AWarning).
func s3aURLs(o Options) bool {
	return o.URLStyle == s3store.StyleS3A && (strings.HasPrefix(o.Store, "s3://") || strings.HasPrefix(o.Store, "s3a://"))
}

// bakeImages bakes the jars into each distinct base image of the
// submission (spark.kubernetes.container.image, and the driver- and
// executor-specific images where they differ), pushes them to the image
// target, and returns the rewrite options that use them and the Spark
// version of the driver's base (its jars; "" when unknown).
func bakeImages(ctx context.Context, o Options, sub *submit.Submission, res *resolver.Result, jars *rewrite.Jars, cache string) ([]rewrite.Option, string, []rewrite.Warning, error) {
	rep := o.Reporter
	main, _, _ := sub.Conf("spark.kubernetes.container.image")
	driver, _, _ := sub.Conf("spark.kubernetes.driver.container.image")
	executor, _, _ := sub.Conf("spark.kubernetes.executor.container.image")
	if main == "" {
		switch {
		case driver != "":
			main = driver
		case executor != "":
			main = executor
		default:
			return nil, "", nil, errdefs.New(errdefs.BadArgument, ErrNoBaseImage)
		}
	}
	lopts := append(append([]layers.Option{}, o.LayerOptions...), layers.WithCacheDir(cache), layers.WithJarOpener(blobcache.JarOpener(cache)))
	baked := map[string]*layers.Result{}
	var ws []rewrite.Warning
	bake := func(base string) (string, error) {
		if base == "" {
			return "", nil
		}
		if r, ok := baked[base]; ok {
			return r.Ref, nil
		}
		r, err := layers.Bake(ctx, layers.BakeInput{Lock: res.Lock, Jars: lock.LocalJars(res.Paths), Base: base, Target: o.ImageTarget,
			SparkHome: o.SparkHome, Strict: o.Strict, Shared: o.SharedLock}, lopts...)
		if err != nil {
			return "", err
		}
		what := "baked"
		if r.CacheHit {
			what = "cache hit"
		}
		rep.Printf("image %s: %s (base %s)", r.Ref, what, base)
		// The verdict, on a bake and on a cache hit (stored with the image).
		for _, w := range r.Warnings {
			ws = append(ws, rewrite.Warning{Kind: rewrite.WarnClasspath, Text: "base " + base + ": " + w.Message + " (" + w.Kind + ")"})
		}
		baked[base] = r
		return r.Ref, nil
	}
	mainRef, err := bake(main)
	if err != nil {
		return nil, "", nil, err
	}
	driverRef, err := bake(driver)
	if err != nil {
		return nil, "", nil, err
	}
	executorRef, err := bake(executor)
	if err != nil {
		return nil, "", nil, err
	}
	jars.Cluster, jars.From = baked[main].Jars, "image "+mainRef
	// The driver runs spark.kubernetes.driver.container.image when set.
	driverBase := main
	if driver != "" {
		driverBase = driver
	}
	if v := baked[driverBase].SparkVersion; v != "" {
		rep.Debugf("image %s: Spark %s (its base's jars)", baked[driverBase].Ref, v)
	}
	return []rewrite.Option{rewrite.WithImage(mainRef), rewrite.WithRoleImages(driverRef, executorRef)}, baked[driverBase].SparkVersion, ws, nil
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
	coords := make([]string, len(res.Lock.Artifacts))
	files := make([]string, len(res.Lock.Artifacts))
	for i, a := range res.Lock.Artifacts {
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
		if err := layers.StrictError("local Spark "+o.LocalSparkJars, kept, "nothing was run"); err != nil {
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
