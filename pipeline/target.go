package pipeline

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// A JarTarget is where Prepare puts the resolved jars so that a driver that
// does not run here can read them: an image (ImageTarget) or a jar store
// (StoreTarget). A new destination (a Spark Connect upload, say) is one
// more implementation; Prepare does not change.
type JarTarget interface {
	// Place puts the resolved set (its lock and local jars) where the
	// cluster reads it, for the submission sub, and says what the rewrite
	// needs to use it.
	Place(ctx context.Context, sub *submit.Submission, in PlaceInput) (*Placed, error)
}

// A SetFinder is a JarTarget that finds a set it already holds by its lock
// alone, without fetching a jar (the store-first path of a pod with no
// route to Maven, and a rewrite onto an image baked earlier or a store).
type SetFinder interface {
	// Find returns the cluster jars of lf's set. A set it does not hold
	// is an error matching ErrNotHeld.
	Find(ctx context.Context, lf *lock.File) (*Placed, error)
}

// ErrNotHeld is matched (errors.Is) by a SetFinder's error when the target
// does not hold the set (yet).
var ErrNotHeld = errors.New("the target does not hold the set")

// notHeld keeps an error's text and kind and also matches ErrNotHeld.
type notHeld struct{ error }

func (e notHeld) Unwrap() error        { return e.error }
func (e notHeld) Is(target error) bool { return target == ErrNotHeld }

// PlaceInput is a resolved set of jars (its lock and the local paths of
// its jars) and where a target reports and caches.
type PlaceInput struct {
	Lock *lock.File
	Jars lock.Jars
	// Wheels gives the local files of Lock.Wheels(), index for index (nil
	// for a lock without wheels).
	Wheels lock.Jars
	// CacheDir is the cache directory ("" is the default; CacheDir).
	CacheDir string
	// Reporter gets the steps and progress (nil: none).
	Reporter *progress.Reporter
}

// Placed is what a JarTarget made of a set: the cluster URLs of its jars
// (in lock order) and what the rewrite needs to use them.
type Placed struct {
	// Cluster are the URLs the cluster reads (rewrite.Jars.Cluster).
	Cluster []string
	// From names where they are, "image REF" or "store URL" (redacted).
	From string
	// Conf is the Spark conf the cluster needs to read them
	// (rewrite.Jars.Conf).
	Conf map[string]string
	// RewriteOptions are added to the rewrite's (the baked images).
	RewriteOptions []rewrite.Option
	// Warnings come before the rewrite's (the bake's classpath checks);
	// Late ones after them (what the cluster needs to read the URLs).
	Warnings, Late []rewrite.Warning
	// SparkVersion is the Spark version of the driver's baked image ("" when
	// unknown, or no image).
	SparkVersion string
	// Python is what the cluster needs to import the set's wheels (nil
	// for a set without wheels): the image's PYTHONPATH, or a store's
	// archive settings.
	Python *rewrite.Python
}

// StoreTarget is a jar store (s3://bucket/prefix or file:///dir): Place
// uploads the set (s3store.Store.Bake), Find reads its manifest.
type StoreTarget struct {
	URL      string
	Options  []s3store.Option
	URLStyle s3store.URLStyle
	// Conf is the Spark conf the cluster needs to read the store's URLs
	// (S3AConf); a key the user set keeps the user's value.
	Conf map[string]string
}

// Place uploads the set to the store and returns its URLs.
func (t *StoreTarget) Place(ctx context.Context, _ *submit.Submission, in PlaceInput) (*Placed, error) {
	st, err := s3store.Open(ctx, t.URL, t.Options...)
	if err != nil {
		return nil, err
	}
	var bopts []s3store.BakeOption
	if len(in.Lock.Wheels()) > 0 {
		bopts = append(bopts, s3store.WithWheels(in.Wheels))
	}
	baked, err := st.Bake(ctx, in.Lock, in.Jars, bopts...)
	in.Reporter.Wait()
	if err != nil {
		return nil, err
	}
	// The bake already holds the set's manifest: no second GET.
	return t.placedFrom(ctx, st, baked.Manifest)
}

// placedFrom is the set of manifest m in the store st: its jars' URLs and
// the settings that ship its wheels' archive (Store.PythonConf).
func (t *StoreTarget) placedFrom(ctx context.Context, st *s3store.Store, m *s3store.Manifest) (*Placed, error) {
	urls, err := st.URLs(ctx, m, t.URLStyle)
	if err != nil {
		return nil, err
	}
	p := t.placed(urls)
	if m.Python != nil {
		conf, err := st.PythonConf(ctx, m, t.URLStyle)
		if err != nil {
			return nil, err
		}
		p.Python = &rewrite.Python{Wheels: len(m.Python.Wheels), Conf: conf, From: p.From}
	}
	return p, nil
}

// Find reads the set's manifest (one GET): ErrNotHeld when the store has
// no such set; a missing bucket is not that.
func (t *StoreTarget) Find(ctx context.Context, lf *lock.File) (*Placed, error) {
	if len(lf.Wheels()) > 0 {
		return t.findWithWheels(ctx, lf)
	}
	if err := lf.JarsOnly("a store's set"); err != nil {
		return nil, err
	}
	urls, err := s3store.SetURLs(ctx, t.URL, lf.Hash(), t.URLStyle, t.Options...)
	switch {
	case errors.Is(err, s3store.ErrNotFound) && !errors.Is(err, s3store.ErrNoBucket):
		return nil, notHeld{err}
	case err != nil:
		return nil, err
	}
	if len(urls) != len(lf.Jars()) {
		return nil, errdefs.Optionf(errdefs.Invalid, "pipeline.StoreTarget.URL", "store %s: set %s lists %d jars, the lock %d", redact.URL(t.URL), lf.Hash(), len(urls), len(lf.Jars()))
	}
	return t.placed(urls), nil
}

// findWithWheels is Find for a lock with wheels: its manifest must name
// the archive of the same wheels.
func (t *StoreTarget) findWithWheels(ctx context.Context, lf *lock.File) (*Placed, error) {
	if err := lf.Placeable("a store's set", true); err != nil {
		return nil, err
	}
	st, err := s3store.Open(ctx, t.URL, t.Options...)
	if err != nil {
		return nil, err
	}
	m, err := st.Manifest(ctx, lf.Hash())
	switch {
	case errors.Is(err, s3store.ErrNotFound) && !errors.Is(err, s3store.ErrNoBucket):
		return nil, notHeld{errdefs.New(errdefs.NotFound, &s3store.SetMissingError{Hash: lf.Hash(), Store: st.URL(), Err: err})}
	case err != nil:
		return nil, err
	}
	if len(m.Jars) != len(lf.Jars()) || m.Python == nil || len(m.Python.Wheels) != len(lf.Wheels()) {
		return nil, errdefs.Optionf(errdefs.Invalid, "pipeline.StoreTarget.URL", "store %s: set %s does not list the lock's %d jars and %d wheels", redact.URL(t.URL), lf.Hash(), len(lf.Jars()), len(lf.Wheels()))
	}
	return t.placedFrom(ctx, st, m)
}

// String is "store", for the lines of Prepare's store-first path.
func (t *StoreTarget) String() string { return "store" }

func (t *StoreTarget) placed(urls []string) *Placed {
	p := &Placed{Cluster: urls, From: "store " + redact.URL(t.URL), Conf: t.Conf}
	if len(urls) > 0 && S3AURLs(t.URL, t.URLStyle) {
		p.Late = []rewrite.Warning{{Kind: rewrite.WarnS3AURLs, Text: S3AWarning}}
	}
	return p
}

// S3AURLs reports whether a store's URLs in style are s3a:// ones (an S3
// store, URLStyle s3a), which Spark reads only with hadoop-aws (S3AWarning).
func S3AURLs(store string, style s3store.URLStyle) bool {
	return style == s3store.StyleS3A && IsS3Store(store)
}

// IsS3Store reports whether a store URL names an S3 store (s3:// or
// s3a://), not a local directory.
func IsS3Store(store string) bool {
	return strings.HasPrefix(store, "s3://") || strings.HasPrefix(store, "s3a://")
}

// S3AConf is the Spark conf that makes the s3a:// URLs of an S3-compatible
// store readable: its endpoint and path-style addressing; nil when the
// URLs are not s3a:// ones or the store is AWS with virtual-host buckets.
func S3AConf(store, endpoint string, pathStyle bool, style s3store.URLStyle) map[string]string {
	if !S3AURLs(store, style) || (endpoint == "" && !pathStyle) {
		return nil
	}
	c := map[string]string{}
	if endpoint != "" {
		c["spark.hadoop.fs.s3a.endpoint"] = endpoint
	}
	if pathStyle {
		c["spark.hadoop.fs.s3a.path.style.access"] = "true"
	}
	return c
}

// ImageFrom is an image baked earlier (prebake bake image): Find gives the
// local:// URLs of the lock's jars from its dev.prebake.jars annotation.
// Place is Find (nothing is baked), and the rewrite sets it as the image.
type ImageFrom struct {
	Ref     string
	Options []layers.Option
}

// Find reads the image's jar list; a jar of the lock it lacks is an error
// matching ErrNotHeld.
func (t *ImageFrom) Find(ctx context.Context, lf *lock.File) (*Placed, error) {
	if err := lf.Placeable("an image's set", true); err != nil {
		return nil, err
	}
	var py *rewrite.Python
	if len(lf.Wheels()) > 0 {
		info, err := layers.Inspect(ctx, t.Ref, t.Options...)
		if err != nil {
			return nil, err
		}
		if py, err = checkImagePython(t.Ref, info, lf); err != nil {
			return nil, err
		}
		if len(lf.Jars()) == 0 {
			return &Placed{From: "image " + t.Ref, Python: py}, nil
		}
	}
	dir, files, err := layers.ReadJars(ctx, t.Ref, t.Options...)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f] = true
	}
	var urls []string
	for _, a := range lf.Jars() {
		if !have[a.File] {
			return nil, notHeld{errdefs.Optionf(errdefs.NotFound, "pipeline.ImageFrom.Ref", "image %s: the image has no %s (its dev.prebake.jars lacks it); bake this lock into it first", t.Ref, a.File)}
		}
		urls = append(urls, "local://"+path.Join(dir, a.File))
	}
	return &Placed{Cluster: urls, From: "image " + t.Ref, Python: py}, nil
}

// String is "image".
func (t *ImageFrom) String() string { return "image" }

// Place is Find, and the rewrite sets the image.
func (t *ImageFrom) Place(ctx context.Context, _ *submit.Submission, in PlaceInput) (*Placed, error) {
	p, err := t.Find(ctx, in.Lock)
	if err != nil {
		return nil, err
	}
	p.RewriteOptions = []rewrite.Option{rewrite.WithImage(t.Ref)}
	return p, nil
}

// FindJars resolves the packages of a command line (plus those of req),
// retrieves them for file: paths, and adds the cluster URLs the finder
// holds for their lock (f nil: none). It returns nil when there is
// nothing to resolve.
func FindJars(ctx context.Context, req resolver.Request, p submit.Packages, f SetFinder, rep *progress.Reporter) (*rewrite.Jars, error) {
	res, paths, err := ResolveJars(ctx, req, p, rep)
	if err != nil || res == nil {
		return nil, err
	}
	j := &rewrite.Jars{Local: paths, LockHash: res.Lock.Hash()}
	if f == nil {
		return j, nil
	}
	pl, err := f.Find(ctx, res.Lock)
	if err != nil {
		return nil, err
	}
	j.Cluster, j.From, j.Conf = pl.Cluster, pl.From, pl.Conf
	return j, nil
}

// JarSource is FindJars as a rewrite.JarSource, for rewrite.Manifest (a
// manifest's documents each name their packages).
func JarSource(req resolver.Request, f SetFinder, rep *progress.Reporter) rewrite.JarSource {
	return rewrite.JarSourceFunc(func(ctx context.Context, p submit.Packages) (*rewrite.Jars, error) {
		return FindJars(ctx, req, p, f, rep)
	})
}
