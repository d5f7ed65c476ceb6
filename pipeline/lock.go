package pipeline

import (
	"context"
	"errors"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	blobcache "github.com/prebake/prebake/resolver/cache"
)

// ErrNothingToBake is returned (kind BadArgument) by LockOrResolve when the
// request has neither packages nor a lock path.
var ErrNothingToBake = errors.New("no package to resolve and no lock to read")

// LockOrResolve gets a set to bake (bake image, bake s3, warm, bundle):
// with no packages in req, the lock at req.LockPath alone, whose jars are
// fetched only when something needs them (LockedJars, from req's
// repositories, settings, offline mode, checksum policy and signatures);
// else the resolution of req. Steps and downloads are reported to rep.
func LockOrResolve(ctx context.Context, req resolver.Request, rep *progress.Reporter) (*lock.File, lock.Jars, error) {
	ropts := []resolver.Option{resolver.WithLogger(rep), resolver.WithProgress(rep)}
	if len(req.Packages) == 0 {
		if req.LockPath == "" {
			return nil, nil, errdefs.New(errdefs.BadArgument, ErrNothingToBake)
		}
		lf, err := lock.Read(req.LockPath)
		if err != nil {
			return nil, nil, err
		}
		// With signatures verified, the jars fetched are checked against the
		// signers the lock records (resolver.FetchLocked).
		fetch := resolver.Request{Repositories: req.Repositories, Settings: req.Settings, Offline: req.Offline,
			ChecksumPolicy: req.ChecksumPolicy, CacheDir: req.CacheDir, Signatures: req.Signatures,
			Home: req.Home, DefaultArtifactRepository: req.DefaultArtifactRepository}
		return lf, LockedJars(lf, fetch, ropts...), nil
	}
	res, err := resolver.Resolve(ctx, req, ropts...)
	if err != nil {
		return nil, nil, err
	}
	return res.Lock, lock.LocalJars(res.Paths), nil
}

// LockedJars fetches a lock's jars into req.CacheDir ("" is the default)
// when a bake needs them, from req's repositories, settings and offline
// mode (resolver.FetchLocked).
func LockedJars(lf *lock.File, req resolver.Request, opts ...resolver.Option) lock.Jars {
	return func(ctx context.Context) ([]string, error) {
		return resolver.FetchLocked(ctx, lf, req, opts...)
	}
}

// CacheDir is dir, or the default cache directory when dir is "".
func CacheDir(dir string) string {
	return blobcache.Dir(dir)
}

// RewriteWorkDir is where the rewrite writes its edited properties files
// (rewrite.WithWorkDir): under the cache directory dir ("" is the
// default).
func RewriteWorkDir(dir string) string {
	return cachedir.At(CacheDir(dir)).Dir(cachedir.DirRewrite)
}

// LayerCache are the layers options of a cache directory ("" is the
// default): the layer cache under it, and jars read from its blobs.
func LayerCache(dir string) []layers.Option {
	dir = CacheDir(dir)
	return []layers.Option{layers.WithCacheDir(dir), layers.WithJarOpener(blobcache.JarOpener(dir))}
}
