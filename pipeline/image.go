package pipeline

import (
	"context"
	"errors"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// ErrNoBaseImage is returned (kind BadArgument) when an image target is
// given but the submission names no base image to bake the jars into.
var ErrNoBaseImage = errors.New("the spark-submit arguments set no spark.kubernetes.container.image, the base image to bake the jars into")

// ImageTarget bakes the jars into each distinct base image of the
// submission (spark.kubernetes.container.image, and the driver- and
// executor-specific images where they differ) and pushes the images to
// Repo; the rewrite then runs them.
type ImageTarget struct {
	// Repo is where the baked images are pushed (registry repository or
	// oci:PATH).
	Repo    string
	Options []layers.Option
	// SparkHome is where the base images keep Spark ("" is /opt/spark),
	// for the bake's check of the jars against it.
	SparkHome string
	// Strict fails the bake (layers.ErrStrict) on a warning of that check.
	Strict bool
	// StrictKinds are the warning kinds Strict fails on
	// (layers.ParseStrict); nil is layers.StrictDefault.
	StrictKinds []string
	// Shared, when set, is a shared (platform) set: its jars go in a layer
	// of their own (layers.BakeInput.Shared).
	Shared *lock.File
}

// Place bakes and pushes one image per distinct base, and returns the
// local:// URLs of the main image, the rewrite options that set the
// images, the bakes' classpath warnings and the Spark version of the
// driver's base (its jars; "" when unknown).
func (t *ImageTarget) Place(ctx context.Context, sub *submit.Submission, in PlaceInput) (*Placed, error) {
	rep := in.Reporter
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
			return nil, errdefs.New(errdefs.BadArgument, ErrNoBaseImage)
		}
	}
	lopts := append(append([]layers.Option{}, t.Options...), LayerCache(in.CacheDir)...)
	baked := map[string]*layers.Result{}
	p := &Placed{}
	bake := func(base string) (string, error) {
		if base == "" {
			return "", nil
		}
		if r, ok := baked[base]; ok {
			return r.Ref, nil
		}
		r, err := layers.Bake(ctx, layers.BakeInput{Lock: in.Lock, Jars: in.Jars, Wheels: in.Wheels, Base: base, Target: t.Repo,
			SparkHome: t.SparkHome, Strict: t.Strict, StrictKinds: t.StrictKinds, Shared: t.Shared}, lopts...)
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
			p.Warnings = append(p.Warnings, rewrite.Warning{Kind: rewrite.WarnClasspath, Text: "base " + base + ": " + w.Message + " (" + w.Kind + ")"})
		}
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
	p.Cluster, p.From = baked[main].Jars, "image "+mainRef
	// The driver runs spark.kubernetes.driver.container.image when set.
	driverBase := main
	if driver != "" {
		driverBase = driver
	}
	if v := baked[driverBase].SparkVersion; v != "" {
		rep.Debugf("image %s: Spark %s (its base's jars)", baked[driverBase].Ref, v)
	}
	p.SparkVersion = baked[driverBase].SparkVersion
	if n := len(in.Lock.Wheels()); n > 0 {
		// Every baked image has them on its PYTHONPATH (layers.WithPythonPath).
		p.Python = &rewrite.Python{Wheels: n, InImage: true, From: p.From}
	}
	p.RewriteOptions = []rewrite.Option{rewrite.WithImage(mainRef), rewrite.WithRoleImages(driverRef, executorRef)}
	return p, nil
}
