package cmd

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
)

func init() { prepareSubmission = prepare }

// prepare is submit's resolve → bake (S3 or image) → rewrite. It returns the
// spark-submit arguments to run.
func prepare(ctx context.Context, g *globals, f *submitFlags, fl *pflag.FlagSet, args []string, stderr io.Writer) ([]string, error) {
	rep := g.reporter(stderr)
	defer rep.Wait()
	if f.s3.store != "" && f.imageTarget != "" {
		return nil, exitcode.Errorf(exitcode.Usage, "--store %s and --image-target %s: give one of them", redact.URL(f.s3.store), f.imageTarget)
	}
	sub, err := submit.LoadSubmission(args, os.Getenv)
	if err != nil {
		return nil, err
	}
	if err := needClusterTarget(f, sub); err != nil {
		return nil, err
	}
	cache := f.resolve.cache
	if cache == "" {
		cache = resolver.DefaultCacheDir()
	}
	opts := []submit.RewriteOption{submit.WithWorkDir(filepath.Join(cache, "rewrite"))}
	jars, err := storeFirst(ctx, f, sub, rep)
	if err != nil {
		return nil, err
	}
	var res *resolver.Result
	var paths []string
	if jars == nil {
		res, paths, err = resolveJars(ctx, &f.resolve, sub.Packages(), rep)
		if err != nil {
			return nil, err
		}
	}
	if res != nil {
		jars = &submit.Jars{Local: paths, LockHash: res.Lock.Hash()}
		switch {
		case f.imageTarget != "":
			imgOpts, err := bakeForSubmit(ctx, rep, f, sub, res, jars, cache)
			if err != nil {
				return nil, err
			}
			opts = append(opts, imgOpts...)
		case f.s3.store != "":
			if err := storeForSubmit(ctx, g, rep, f, res, jars, stderr); err != nil {
				return nil, err
			}
		}
	}
	opts = append(opts, submit.WithJarSource(submit.JarSourceFunc(func(context.Context, submit.Packages) (*submit.Jars, error) {
		return jars, nil
	})))
	r, err := submit.Rewrite(ctx, args, opts...)
	if err != nil {
		return nil, err
	}
	for _, w := range r.Warnings {
		rep.Warnf("%s", w)
	}
	for _, ch := range r.Changes {
		rep.Debugf("rewrite: %s %s (%s)", ch.Action, ch.Target, ch.Reason)
	}
	return r.Args, nil
}

// storeFirst is the path of a pod with no route to Maven: in cluster mode
// with --store and a --lock that matches the inputs, a set already in the
// store (named by the lock hash) gives the jar URLs with one GET, and no jar
// is fetched or resolved here. It returns nil when that path does not apply
// or the set is not in the store yet.
func storeFirst(ctx context.Context, f *submitFlags, sub *submit.Submission, rep *progress.Reporter) (*submit.Jars, error) {
	if f.s3.store == "" || f.resolve.lock == "" || sub.DeployMode() != "cluster" {
		return nil, nil
	}
	req, err := requestFor(&f.resolve, sub.Packages())
	if err != nil || len(req.Packages) == 0 {
		return nil, err
	}
	lock, err := resolver.LockFor(req)
	if err != nil {
		if f.resolve.frozen && errors.Is(err, resolver.ErrStaleLock) {
			return nil, err
		}
		return nil, nil
	}
	sopts, err := f.storeOptions(&f.s3, rep)
	if err != nil {
		return nil, err
	}
	urls, err := s3store.SetURLs(ctx, f.s3.store, lock.Hash(), f.urlStyle, sopts...)
	switch {
	case errors.Is(err, s3store.ErrNotFound) && !errors.Is(err, s3store.ErrNoBucket):
		rep.Printf("set %s is not in the store yet: resolving and uploading it", lock.Hash())
		return nil, nil
	case err != nil:
		return nil, err
	}
	rep.Printf("set %s found in the store: %d jars, nothing to fetch", lock.Hash(), len(urls))
	if f.urlStyle == s3store.StyleS3A && isS3Store(f.s3.store) {
		rep.Warnf("%s", s3aWarning)
	}
	return &submit.Jars{Cluster: urls, From: "store " + redact.URL(f.s3.store), LockHash: lock.Hash(), Conf: f.s3.s3aConf(f.urlStyle)}, nil
}

// storeForSubmit uploads the set to the S3 store and sets the cluster URLs.
func storeForSubmit(ctx context.Context, g *globals, rep *progress.Reporter, f *submitFlags, res *resolver.Result, jars *submit.Jars, stderr io.Writer) error {
	sopts, err := f.storeOptions(&f.s3, rep)
	if err != nil {
		return err
	}
	st, err := s3store.Open(ctx, f.s3.store, sopts...)
	if err != nil {
		return err
	}
	baked, err := st.Bake(ctx, res.Lock, s3store.LocalPaths(res.Paths))
	rep.Wait()
	if err != nil {
		return err
	}
	// The bake already holds the set's manifest: no second GET.
	urls, err := st.URLs(ctx, baked.Manifest, f.urlStyle)
	if err != nil {
		return err
	}
	if f.urlStyle == s3store.StyleS3A && isS3Store(f.s3.store) {
		rep.Warnf("%s", s3aWarning)
	}
	jars.Cluster, jars.From, jars.Conf = urls, "store "+redact.URL(f.s3.store), f.s3.s3aConf(f.urlStyle)
	return nil
}

// bakeForSubmit bakes the jars into each distinct base image of the
// submission (spark.kubernetes.container.image, and the driver- and
// executor-specific images where they differ), pushes them to
// --image-target, and returns the rewrite options that use them.
func bakeForSubmit(ctx context.Context, rep *progress.Reporter, f *submitFlags, sub *submit.Submission, res *resolver.Result, jars *submit.Jars, cache string) ([]submit.RewriteOption, error) {
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
			return nil, exitcode.Errorf(exitcode.Usage, "--image-target %s: the spark-submit arguments set no spark.kubernetes.container.image, the base image to bake the jars into", f.imageTarget)
		}
	}
	lopts, err := f.registry.options(rep)
	if err != nil {
		return nil, err
	}
	lopts = append(lopts, layers.WithCacheDir(cache))
	baked := map[string]*layers.Result{}
	bake := func(base string) (string, error) {
		if base == "" {
			return "", nil
		}
		if r, ok := baked[base]; ok {
			return r.Ref, nil
		}
		r, err := layers.Bake(ctx, layers.BakeInput{Lock: res.Lock, Paths: res.Paths, Base: base, Target: f.imageTarget}, lopts...)
		if err != nil {
			return "", err
		}
		what := "baked"
		if r.CacheHit {
			what = "cache hit"
		}
		rep.Printf("image %s: %s (base %s)", r.Ref, what, base)
		baked[base] = r
		return r.Ref, nil
	}
	mainRef, err := bake(main)
	if err != nil {
		return nil, err
	}
	driverRef, err := bake(driver)
	if err != nil {
		return nil, err
	}
	executorRef, err := bake(executor)
	if err != nil {
		return nil, err
	}
	jars.Cluster, jars.From = baked[main].Jars, "image "+mainRef
	return []submit.RewriteOption{submit.WithImage(mainRef), submit.WithRoleImages(driverRef, executorRef)}, nil
}
