package cache

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/cachedir"
)

// DefaultDir is the user's cache directory (os.UserCacheDir's, read
// through getenv) + /prebake, else prebake-cache under the temp directory.
// The PREBAKE_CACHE override is the caller's: cmd reads it with the other
// settings.
func DefaultDir(getenv func(string) string) string {
	if d := userCacheDir(getenv); d != "" {
		return filepath.Join(d, "prebake")
	}
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	return filepath.Join(tmp, "prebake-cache")
}

// Dir is dir, or DefaultDir from the process environment when dir is "":
// the one place a library picks the default cache.
func Dir(dir string) string {
	if dir == "" {
		return DefaultDir(os.Getenv)
	}
	return dir
}

// userCacheDir is os.UserCacheDir from getenv: "" when it has none.
func userCacheDir(getenv func(string) string) string {
	switch runtime.GOOS {
	case "windows":
		return getenv("LocalAppData")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Caches")
		}
	case "plan9":
		if h := getenv("home"); h != "" {
			return filepath.Join(h, "lib", "cache")
		}
	default:
		if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
			return d
		}
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, ".cache")
		}
	}
	return ""
}

// Logger receives the cache's warnings and lock-wait lines.
type Logger interface {
	Printf(format string, args ...any)
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// ErrNotFound is matched (errors.Is) by every "module, artifact or blob
// not found" error of the resolver packages (resolver.ErrNotFound is it).
var ErrNotFound = errors.New("not found")

// BlobPath is where the cache keeps the file with the given sha256 (hex):
// <cache>/blobs/sha256/<hex>, <cache> being the user's cache in cacheDir
// (cachedir.Root: cacheDir, or cacheDir/u<uid> in a shared cache
// directory). A blob's name is its content hash; blobs are written to a
// temp file and renamed into place, so a present blob is complete.
func BlobPath(cacheDir, sha256Hex string) string {
	return cachedir.At(cacheDir).Blob(sha256Hex)
}

// cache is the content-addressed store plus an index from a URL (without
// userinfo) to the blob that URL served:
//
//	<dir>/blobs/sha256/<hex>          the files
//	<dir>/index/<h[:2]>/<h>           h = sha256(url); "sha256 size url\n"
//	<dir>/tmp/                        downloads in progress
//
// dir is the user's cache (cachedir.Root): in a shared cache directory
// (sticky, writable by all, as 1777) every user has their own, 0700. The
// directories prebake writes files into (tmp, locks) or hands out paths
// under (retrieve, rewrite) are checked before use (cachedir.Check: owned
// by the user or root, open to no one else, and so is every directory
// above), so another user cannot swap what they hold.
//
// Every write is temp file + rename, so concurrent processes sharing a
// cache never see partial files; two writers of one blob write the same
// bytes, and the last rename wins harmlessly.
type Cache struct {
	Dir string
	// stamps is this user's stamp directory ("" when unusable): see
	// blobcheck.go.
	stamps string
	// dirMode is the mode of the directories the cache creates.
	dirMode os.FileMode
	// opened is when this process opened the cache: a 404 another process
	// recorded since counts as this run's (see cachelock.go).
	Opened time.Time
	// tmp is the checked temp directory; tmpErr says why there is none
	// (every download then fails with it).
	tmp    string
	tmpErr error
	// locks is the checked lock directory, "" when unusable (downloads go
	// unlocked: see cachelock.go).
	Locks string
	// log receives the lock-wait lines (never nil).
	log Logger
	// options bound the wait for a held download lock (WithLockWait).
	options
}

// Option configures Open.
type Option func(*options) error

type options struct {
	// lockWaitNote and lockWaitMax bound the wait for a held download lock.
	lockWaitNote, lockWaitMax time.Duration
}

// WithLockWait sets how long a wait for another process's download lock goes
// on before it is reported (note) and before the download goes ahead without
// the lock (maxWait); the defaults are 5 s and 30 s. Values <= 0 keep the default.
func WithLockWait(note, maxWait time.Duration) Option {
	return func(o *options) error {
		if note > 0 {
			o.lockWaitNote = note
		}
		if maxWait > 0 {
			o.lockWaitMax = maxWait
		}
		return nil
	}
}

// makeOptions sets the defaults, then applies opts; the first option error
// stops it.
func makeOptions(opts []Option) (*options, error) {
	o := &options{lockWaitNote: defaultLockWaitNote, lockWaitMax: defaultLockWaitMax}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// staleTemp is how old a temp file must be before a new process removes it
// (it was left by a killed process).
const staleTemp = time.Hour

// openCache opens (creating it if needed) the cache in dir. private is set
// when the repositories carry credentials: the cache then holds artifacts
// only those credentials may read, and every directory it creates is 0700
// (see the README, "Cache layout": a cache serves what it holds to whoever
// can read it, as Maven's local repository does). log (may be nil) is
// warned when a private cache is open to other users.
func Open(dir string, private bool, log Logger, opts ...Option) (*Cache, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	dir = Dir(dir)
	if log == nil {
		log = nopLogger{}
	}
	layout := cachedir.At(dir)
	root := layout.Root()
	if private {
		if err := checkPrivate(root); err != nil {
			return nil, err
		}
	}
	mode := os.FileMode(0o755)
	if private {
		mode = 0o700
	}
	if root != dir {
		// A shared cache directory: the user's own cache in it, 0700.
		if err := cachedir.Make(root); err != nil && !cachedir.Tolerable(err) {
			return nil, err
		}
	}
	for _, d := range []string{cachedir.DirBlobs, cachedir.DirIndex} {
		if err := os.MkdirAll(layout.Dir(d), mode); err != nil {
			return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", root, err))
		}
	}
	if info, err := os.Stat(root); private && err == nil && info.Mode().Perm()&0o077 != 0 {
		log.Printf("warning: cache %s (mode %04o) is open to other users, and it will hold artifacts fetched with credentials; they will read them without credentials (use a private cache directory, or chmod 700 it)", root, info.Mode().Perm())
	}
	c := &Cache{Dir: root, stamps: StampDir(dir, true), dirMode: mode, Opened: time.Now(), log: log,
		options: *o}
	c.tmp = layout.Dir(cachedir.DirTmp)
	if c.tmpErr = cachedir.Make(c.tmp); cachedir.Tolerable(c.tmpErr) {
		log.Printf("warning: %v", c.tmpErr)
		c.tmpErr = nil
	}
	if c.tmpErr != nil {
		c.tmp = ""
	} else {
		c.sweepTemp()
	}
	c.Locks = privateDir(layout.Dir(cachedir.DirLocks))
	return c, nil
}

// checkPrivate refuses a cache whose artifacts another user owns when the
// repositories carry credentials (review 2, finding 4): this run would be
// served what that user fetched without asking the repository (so wrong
// credentials would pass), and they would read what this run fetches. A
// cache directory of root's or another user's that this user may write is
// fine: the directories prebake creates in it are 0700 and the user's.
func checkPrivate(root string) error {
	me := os.Geteuid()
	for _, d := range []string{root, filepath.Dir(filepath.Join(root, cachedir.DirBlobs)), filepath.Join(root, cachedir.DirBlobs), filepath.Join(root, cachedir.DirIndex)} {
		uid, ok := cachedir.Owner(d)
		if !ok || uid == me || (d == root && cachedir.Writable(d)) {
			continue // missing (created ours), ours, or no owners on this platform
		}
		return errdefs.Errorf(errdefs.Denied, "cache %s belongs to %s, not to you (%s), and the repositories carry credentials: this run would be served, without asking them, what that user fetched, and what it fetches would be served to them; use a cache directory of your own", d, cachedir.Describe(uid), cachedir.Describe(me))
	}
	return nil
}

// privateDir makes dir 0700 (narrowing a directory of ours left open by an
// older prebake) and checks it; "" when it cannot be used.
func privateDir(dir string) string {
	if err := cachedir.Make(dir); err != nil && !cachedir.Tolerable(err) {
		return ""
	}
	if info, err := os.Lstat(dir); err == nil && info.Mode().Perm()&0o077 != 0 && cachedir.Mine(dir) {
		if os.Chmod(dir, 0o700) != nil {
			return ""
		}
	}
	return dir
}

// sweepTemp removes temp files left by killed processes. The directory is
// opened without following a symbolic link, and must still be the user's.
func (c *Cache) sweepTemp() {
	f, err := openDirNoFollow(c.tmp)
	if err != nil {
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.IsDir() || !ownedByMe(info) {
		return
	}
	ents, err := f.ReadDir(-1)
	if err != nil {
		return
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			os.Remove(filepath.Join(c.tmp, e.Name()))
		}
	}
}

// tempFile creates a temp file in the checked temp directory.
func (c *Cache) tempFile(pattern string) (*os.File, error) {
	if c.tmpErr != nil {
		return nil, c.tmpErr
	}
	f, err := os.CreateTemp(c.tmp, pattern)
	if err != nil {
		return nil, errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", c.Dir, err))
	}
	return f, nil
}

func (c *Cache) BlobPath(sum string) string { return BlobPath(c.Dir, sum) }

func (c *Cache) IndexPath(url string) string {
	h := sha256.Sum256([]byte(url))
	x := hex.EncodeToString(h[:])
	return filepath.Join(c.Dir, cachedir.DirIndex, x[:2], x)
}

// indexEntry is a URL's cached blob.
type IndexEntry struct {
	Sha256 string
	Size   int64
}

// lookup finds the blob a URL served before. It returns false when the URL
// is not indexed or its blob is gone or does not verify (VerifyBlob): the
// URL is then fetched again and the fresh copy replaces the bad blob.
//
// An index entry another user wrote is not trusted (it could name any
// blob): only the user's and root's are read.
func (c *Cache) Lookup(url string) (IndexEntry, bool) {
	data, err := readTrusted(c.IndexPath(url))
	if err != nil {
		return IndexEntry{}, false
	}
	f := strings.SplitN(strings.TrimSpace(string(data)), " ", 3)
	if len(f) != 3 || f[2] != url || len(f[0]) != 64 {
		return IndexEntry{}, false
	}
	size, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return IndexEntry{}, false
	}
	if VerifyFile(c.stamps, c.BlobPath(f[0]), f[0], size) != nil {
		return IndexEntry{}, false
	}
	return IndexEntry{Sha256: f[0], Size: size}, true
}

// maxIndexEntry bounds an index entry's size (a URL and two numbers).
const maxIndexEntry = 64 << 10

// readTrusted reads a small cache file that the user or root owns (checked
// on the open file, so a swap after the check does not matter).
func readTrusted(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() || !cachedir.TrustedOwner(info) {
		return nil, fmt.Errorf("%s: not a regular file of yours or root's", path)
	}
	return io.ReadAll(io.LimitReader(f, maxIndexEntry))
}

// record indexes url → blob.
func (c *Cache) Record(url string, e IndexEntry) error {
	line := fmt.Sprintf("%s %d %s\n", e.Sha256, e.Size, url)
	if err := c.WriteAtomic(c.IndexPath(url), []byte(line)); err != nil {
		return errdefs.New(errdefs.CantWrite, fmt.Errorf("cache index for %s: %w", url, err))
	}
	return nil
}

// writeAtomic writes a small file by temp + rename, without fsync (see
// commit).
func (c *Cache) WriteAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), c.dirMode); err != nil {
		return err
	}
	f, err := c.tempFile("idx-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// hasBlob reports whether the blob exists with the given size and a
// matching stamp (stat and stamp only, no hashing).
func (c *Cache) hasBlob(sum string, size int64) bool {
	info, err := os.Stat(c.BlobPath(sum))
	return err == nil && info.Mode().IsRegular() && (size < 0 || info.Size() == size) && Stamped(c.stamps, sum, info)
}

// sums are the digests of one download.
type Sums struct {
	SHA256, SHA1, MD5 string
	Size              int64
}

// tempWriter writes a download to <cache>/tmp while hashing it.
type TempWriter struct {
	c                  *Cache
	f                  *os.File
	w                  io.Writer
	h256, h1, h5       hash.Hash
	n                  int64
	committed, aborted bool
	closed             bool
}

// close closes the temp file once (a staged import closes it before
// commit: see import.go).
func (t *TempWriter) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	return t.f.Close()
}

func (c *Cache) NewTemp() (*TempWriter, error) {
	f, err := c.tempFile("dl-*")
	if err != nil {
		return nil, err
	}
	t := &TempWriter{c: c, f: f, h256: sha256.New(), h1: sha1.New(), h5: md5.New()}
	t.w = io.MultiWriter(f, t.h256, t.h1, t.h5)
	return t, nil
}

func (t *TempWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.n += int64(n)
	return n, err
}

// ReaderAt reads the bytes written so far (a wheel is checked as a zip
// before it is committed).
func (t *TempWriter) ReaderAt() io.ReaderAt { return t.f }

// reset truncates the temp file for a retry.
func (t *TempWriter) Reset() error {
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := t.f.Truncate(0); err != nil {
		return err
	}
	t.h256.Reset()
	t.h1.Reset()
	t.h5.Reset()
	t.n = 0
	return nil
}

func (t *TempWriter) Sums() Sums {
	return Sums{
		SHA256: hex.EncodeToString(t.h256.Sum(nil)),
		SHA1:   hex.EncodeToString(t.h1.Sum(nil)),
		MD5:    hex.EncodeToString(t.h5.Sum(nil)),
		Size:   t.n,
	}
}

// commit renames the temp file to its blob path, and stamps it. An
// existing blob of that name is kept only when its stamp vouches for it;
// otherwise the fresh copy (hashed as it was written) replaces it, so a
// blob modified in the cache is repaired by the next download.
func (t *TempWriter) Commit() (string, error) {
	s := t.Sums()
	// No fsync: it would put a disk flush on the critical path of every
	// POM. A crash can at worst leave a blob shorter than its name says;
	// every reader checks the size (lock, index), and a wrong-size blob is
	// fetched again.
	if err := t.Close(); err != nil {
		t.Abort()
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", t.c.Dir, err))
	}
	dst := t.c.BlobPath(s.SHA256)
	if t.c.hasBlob(s.SHA256, s.Size) {
		t.Abort()
		return dst, nil
	}
	if err := os.Chmod(t.f.Name(), 0o444); err != nil {
		t.Abort()
		return "", errdefs.New(errdefs.CantWrite, err)
	}
	if err := os.Rename(t.f.Name(), dst); err != nil {
		t.Abort()
		// A cache we cannot write into may still hold the right bytes.
		if VerifyFile(t.c.stamps, dst, s.SHA256, s.Size) == nil {
			return dst, nil
		}
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", t.c.Dir, err))
	}
	t.committed = true
	writeStamp(t.c.stamps, s.SHA256, dst)
	return dst, nil
}

// abort removes the temp file (idempotent).
func (t *TempWriter) Abort() {
	if t.committed || t.aborted {
		return
	}
	t.aborted = true
	t.Close()
	os.Remove(t.f.Name())
}

// sumsOf hashes r as a download is hashed.
func SumsOf(r io.Reader) (Sums, error) {
	t := &TempWriter{h256: sha256.New(), h1: sha1.New(), h5: md5.New()}
	t.w = io.MultiWriter(t.h256, t.h1, t.h5)
	if _, err := io.Copy(t, r); err != nil {
		return Sums{}, err
	}
	return t.Sums(), nil
}

// putBytes stores data (hashed as s) as a blob, unless a stamped blob of
// that digest is there already, and returns its path.
func (c *Cache) PutBytes(data []byte, s Sums) (string, error) {
	if c.hasBlob(s.SHA256, s.Size) {
		return c.BlobPath(s.SHA256), nil
	}
	t, err := c.NewTemp()
	if err != nil {
		return "", err
	}
	if _, err := t.Write(data); err != nil {
		t.Abort()
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("cache %s: %w", c.Dir, err))
	}
	return t.Commit()
}

// putFile copies a local file into the cache and returns its digests. A
// file whose stamped blob is there already costs one read and no write:
// a file creation costs 1–2 ms on some disks (see TestDeepGraphsLinear).
func (c *Cache) PutFile(path string) (Sums, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return Sums{}, "", err
	}
	defer f.Close()
	if s, err := SumsOf(f); err == nil && c.hasBlob(s.SHA256, s.Size) {
		return s, c.BlobPath(s.SHA256), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Sums{}, "", err
	}
	t, err := c.NewTemp()
	if err != nil {
		return Sums{}, "", err
	}
	if _, err := io.Copy(t, f); err != nil {
		t.Abort()
		return Sums{}, "", fmt.Errorf("copying %s into the cache: %w", path, err)
	}
	s := t.Sums()
	p, err := t.Commit()
	return s, p, err
}

// errNotCached is returned offline for URLs the cache lacks.
var ErrNotCached = errors.New("not in the cache (offline)")
