package pipeline

import (
	"context"
	"path"

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

// Target says where the cluster URLs of resolved jars come from: an image
// baked earlier (ImageFrom: its dev.prebake.jars annotation) or a store
// baked earlier (Store: its set manifest). With neither, only local file:
// paths are given.
type Target struct {
	ImageFrom    string
	ImageOptions []layers.Option
	Store        string
	StoreOptions []s3store.Option
	URLStyle     s3store.URLStyle
	// StoreConf is what Spark needs to read the store's URLs (see
	// Options.StoreConf).
	StoreConf map[string]string
}

// ClusterURLs returns the cluster URLs of lf's jars, in lock order, and
// what they came from; nil when the target names no image or store.
func (t *Target) ClusterURLs(ctx context.Context, lf *lock.File) ([]string, string, error) {
	switch {
	case t.ImageFrom != "":
		dir, files, err := layers.ReadJars(ctx, t.ImageFrom, t.ImageOptions...)
		if err != nil {
			return nil, "", err
		}
		have := map[string]bool{}
		for _, f := range files {
			have[f] = true
		}
		var urls []string
		for _, a := range lf.Artifacts {
			if !have[a.File] {
				return nil, "", errdefs.Optionf(errdefs.NotFound, "pipeline.Target.ImageFrom", "image %s: the image has no %s (its dev.prebake.jars lacks it); bake this lock into it first", t.ImageFrom, a.File)
			}
			urls = append(urls, "local://"+path.Join(dir, a.File))
		}
		return urls, "image " + t.ImageFrom, nil
	case t.Store != "":
		urls, err := s3store.SetURLs(ctx, t.Store, lf.Hash(), t.URLStyle, t.StoreOptions...)
		if err != nil {
			return nil, "", err
		}
		if len(urls) != len(lf.Artifacts) {
			return nil, "", errdefs.Optionf(errdefs.Invalid, "pipeline.Target.Store", "store %s: set %s lists %d jars, the lock %d", redact.URL(t.Store), lf.Hash(), len(urls), len(lf.Artifacts))
		}
		return urls, "store " + redact.URL(t.Store), nil
	}
	return nil, "", nil
}

// JarSource resolves the packages of a command line (plus those of req),
// retrieves them for file: paths, and adds the target's cluster URLs.
func JarSource(req resolver.Request, t *Target, rep *progress.Reporter) rewrite.JarSource {
	return rewrite.JarSourceFunc(func(ctx context.Context, p submit.Packages) (*rewrite.Jars, error) {
		res, paths, err := ResolveJars(ctx, req, p, rep)
		if err != nil || res == nil {
			return nil, err
		}
		j := &rewrite.Jars{Local: paths, LockHash: res.Lock.Hash()}
		j.Cluster, j.From, err = t.ClusterURLs(ctx, res.Lock)
		if err != nil {
			return nil, err
		}
		if t.ImageFrom == "" && t.Store != "" {
			j.Conf = t.StoreConf
		}
		return j, nil
	})
}

// LockedJars fetches a lock's jars into req.CacheDir ("" is the default)
// when a bake needs them, from req's repositories, settings and offline
// mode (resolver.FetchLocked).
func LockedJars(lf *lock.File, req resolver.Request, opts ...resolver.Option) lock.Jars {
	return func(ctx context.Context) ([]string, error) {
		return resolver.FetchLocked(ctx, lf, req, opts...)
	}
}
