package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/resolver"
	blobcache "github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/resolver/repo"
)

// An import stages its files in a directory of its own under the cache's
// temp directory, <cache>/tmp/bundle-staging-<random>, holding an
// exclusive lock (flock) on <dir>/.lock while it runs: a jar set is moved
// into the cache only once every file of the bundle is verified, and the
// whole directory goes when the import ends, whatever the outcome. A
// process killed with SIGKILL cannot remove it, but the kernel drops its
// lock: the next import into that cache removes every staging directory
// whose lock it can take (none is in use), or, where there are no locks,
// that is older than staleStaging. (The cache's own sweep removes only
// the loose temp files of downloads, after an hour.)
const (
	stagingPrefix = "bundle-staging-"
	stagingLock   = ".lock"
	// staleStaging is how old a staging directory with no lock to test
	// must be to be removed.
	staleStaging = time.Hour
	// stagingGrace protects a staging directory just made, between the
	// creation of its lock file and the flock on it (as layers' tempGrace
	// does for temp files).
	stagingGrace = 10 * time.Second
)

// staging is one import's staging directory: a cache of its own (so
// resolver.Stage's checks apply), whose blobs move into the real cache.
type staging struct {
	cache    *blobcache.Cache
	cacheDir string
	dir      string
	lock     *os.File
	staged   *resolver.Staged
}

// newStaging opens the cache in cacheDir (the user's, checked: see
// blobcache.Open), removes the staging directories of imports that were
// killed, and makes this import's.
func newStaging(cacheDir string) (*staging, error) {
	c, err := blobcache.Open(cacheDir, false, nil)
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(c.Dir, "tmp")
	if err := cachedir.Make(tmp); err != nil && !cachedir.Tolerable(err) {
		return nil, err
	}
	sweepStaging(tmp)
	dir, err := os.MkdirTemp(tmp, stagingPrefix+"*")
	if err != nil {
		return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", c.Dir, err))
	}
	st := &staging{cache: c, cacheDir: cacheDir, dir: dir}
	if st.lock, err = lockStaging(filepath.Join(dir, stagingLock)); err != nil {
		st.remove()
		return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", c.Dir, err))
	}
	if st.staged, err = resolver.Stage(dir); err != nil {
		st.remove()
		return nil, err
	}
	return st, nil
}

// sweepStaging removes, from a cache's temp directory tmp, the staging
// directories of imports that no longer run: those whose lock is free,
// or, where no lock can be tested, older than an hour. A directory
// younger than stagingGrace is kept whatever its lock (its import may
// not have taken it yet). It reports how many it removed.
func sweepStaging(tmp string) int {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), stagingPrefix) || !e.IsDir() { // IsDir: not a link
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < stagingGrace {
			continue // just made: its lock may not be taken yet
		}
		free, known := stagingFree(filepath.Join(dir, stagingLock))
		if !known {
			free = time.Since(info.ModTime()) > staleStaging
		}
		if free && os.RemoveAll(dir) == nil {
			n++
		}
	}
	return n
}

// move puts the staged blob of sha256 sum into the cache (unless the cache
// holds it already) and stamps it.
func (st *staging) move(staged, sum string, size int64) error {
	if blobcache.VerifyBlob(st.cacheDir, sum, size) == nil {
		return nil
	}
	if err := os.Rename(staged, blobcache.BlobPath(st.cacheDir, sum)); err != nil {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", st.cache.Dir, err))
	}
	return blobcache.VerifyBlob(st.cacheDir, sum, size)
}

// putSignature caches the signature of the jar of sha256 sum where a run
// with signatures verified reads it. One there already is kept unless
// replace (the bundle's was verified against the pinned keys).
func (st *staging) putSignature(sum string, sig []byte, replace bool) error {
	p := repo.SignaturePath(st.cacheDir, sum)
	if _, err := os.Lstat(p); err == nil && !replace {
		return nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", st.cache.Dir, err))
	}
	if err := st.cache.WriteAtomic(p, sig); err != nil {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("caching the signature %s: %w", p, err))
	}
	return nil
}

// remove removes the staging directory (idempotent).
func (st *staging) remove() {
	if st.staged != nil {
		st.staged.Abort()
	}
	if st.dir != "" {
		os.RemoveAll(st.dir)
		st.dir = ""
	}
	if st.lock != nil {
		st.lock.Close()
		st.lock = nil
	}
}
