package resolver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prebake/prebake/errdefs"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/internal/mavenhttp"
)

func demoRequest(t *testing.T, cache, lock string) Request {
	t.Helper()
	repo, err := filepath.Abs("../testdata/demo-repo")
	if err != nil {
		t.Fatal(err)
	}
	return Request{Packages: []string{"org.slf4j:slf4j-api:2.0.7"}, Repositories: []string{"file://" + repo + "/"},
		NoDefaultRepositories: true, CacheDir: cache, LockPath: lock}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// tamper modifies a cache file the ways a user sharing the cache could.
var tampers = []struct {
	name string
	do   func(t *testing.T, path string)
}{
	{"rewritten in place, same size", func(t *testing.T, p string) {
		info, _ := os.Stat(p)
		os.Chmod(p, 0o644)
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, info.Size())
		for i := range buf {
			buf[i] = "EVIL"[i%4]
		}
		f.Write(buf)
		f.Close()
		os.Chtimes(p, info.ModTime(), info.ModTime()) // mtime put back: only ctime tells
	}},
	{"replaced by another file, same size", func(t *testing.T, p string) {
		info, _ := os.Stat(p)
		tmp := p + ".evil"
		buf := make([]byte, info.Size())
		for i := range buf {
			buf[i] = 'X'
		}
		if err := os.WriteFile(tmp, buf, 0o444); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(tmp, info.ModTime(), info.ModTime())
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}},
	{"truncated", func(t *testing.T, p string) {
		os.Chmod(p, 0o644)
		if err := os.Truncate(p, 3); err != nil {
			t.Fatal(err)
		}
	}},
}

// A blob modified in the cache is never used: the lock path, a fresh
// resolution and retrieve repair it from the repository; offline it is an
// error (65) naming the blob.
func TestModifiedBlobIsRepaired(t *testing.T) {
	ctx := context.Background()
	for _, tc := range tampers {
		for _, mode := range []string{"lock", "fresh", "offline", "retrieve"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				cache, lock := filepath.Join(dir, "cache"), filepath.Join(dir, "prebake.lock")
				demoRepo, _ := filepath.Abs("../testdata/demo-repo")
				srv := mavenhttp.New(demoRepo) // offline: a file:// repository would still repair
				defer srv.Close()
				demoRequest := func(t *testing.T, cache, lock string) Request {
					r := demoRequest(t, cache, lock)
					r.Repositories = []string{srv.URL()}
					return r
				}
				res, err := Resolve(ctx, demoRequest(t, cache, lock))
				if err != nil {
					t.Fatal(err)
				}
				a := res.Lock.Artifacts[0]
				blob := res.Paths[0]
				if mode == "retrieve" {
					rdir, paths, err := blobcache.Retrieve(ctx, res.Lock, cache)
					if err != nil {
						t.Fatal(err)
					}
					tc.do(t, paths[0])
					if mode == "retrieve" && sha256File(t, blob) != a.Sha256 {
						// the retrieve file was a hard link: the blob changed too
						if _, err := Resolve(ctx, demoRequest(t, cache, lock)); err != nil {
							t.Fatal(err)
						}
					}
					rdir2, paths2, err := blobcache.Retrieve(ctx, res.Lock, cache)
					if err != nil {
						t.Fatal(err)
					}
					if rdir2 != rdir {
						t.Errorf("retrieve dir %s, then %s", rdir, rdir2)
					}
					if got := sha256File(t, paths2[0]); got != a.Sha256 {
						t.Errorf("retrieved %s hashes to %s, the lock says %s", paths2[0], got, a.Sha256)
					}
					return
				}
				tc.do(t, blob)
				req := demoRequest(t, cache, lock)
				switch mode {
				case "fresh":
					req.LockPath = ""
				case "offline":
					req.Offline = true
				}
				res2, err := Resolve(ctx, req)
				if mode == "offline" {
					if !errors.Is(err, blobcache.ErrCorruptBlob) || errdefs.KindOf(err) != errdefs.Invalid {
						t.Fatalf("offline with a modified blob: err = %v (code %d), want 65 and ErrCorruptBlob", err, errdefs.KindOf(err))
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := sha256File(t, res2.Paths[0]); got != a.Sha256 {
					t.Errorf("%s: blob %s hashes to %s after the resolve, want it repaired", mode, res2.Paths[0], got)
				}
				if err := blobcache.VerifyBlob(cache, a.Sha256, a.Size); err != nil {
					t.Errorf("VerifyBlob after the repair: %v", err)
				}
			})
		}
	}
}

// VerifyBlob trusts a blob by its stamp only while the blob's stat is the
// one stamped, and stamps only in the user's own 0700 directory.
func TestVerifyBlobStamps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	res, err := Resolve(ctx, demoRequest(t, cache, ""))
	if err != nil {
		t.Fatal(err)
	}
	a := res.Lock.Artifacts[0]
	sd := blobcache.StampDir(cache, false)
	if sd == "" {
		t.Fatal("no stamp directory after a resolve")
	}
	if info, err := os.Stat(sd); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("stamp dir %s: %v, mode %v; want 0700", sd, err, info.Mode().Perm())
	}
	info, _ := os.Stat(res.Paths[0])
	if !blobcache.Stamped(sd, a.Sha256, info) {
		t.Fatal("the downloaded blob has no matching stamp")
	}
	// A stamp dir open to others is not used.
	os.Chmod(sd, 0o755)
	if blobcache.StampDir(cache, true) != "" {
		t.Error("a stamp directory with mode 0755 is used")
	}
	os.Chmod(sd, 0o700)
	tampers[0].do(t, res.Paths[0])
	info, _ = os.Stat(res.Paths[0])
	if blobcache.Stamped(sd, a.Sha256, info) {
		t.Fatal("a blob rewritten in place still matches its stamp")
	}
	if err := blobcache.VerifyBlob(cache, a.Sha256, a.Size); !errors.Is(err, blobcache.ErrCorruptBlob) || errdefs.KindOf(err) != errdefs.Invalid {
		t.Fatalf("VerifyBlob of a modified blob: %v (code %d), want ErrCorruptBlob, 65", err, errdefs.KindOf(err))
	}
}

type logLines []string

func (l *logLines) Printf(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }

// A cache first used with credentials is created 0700 (it will serve what
// it holds to whoever can read it, as Maven's local repository does); a
// cache open to others is warned about when credentials are used.
func TestCacheModeWithCredentials(t *testing.T) {
	demoRepo, _ := filepath.Abs("../testdata/demo-repo")
	srv := mavenhttp.New(demoRepo, mavenhttp.WithBasicAuth("bob", "s3cret-pw"))
	defer srv.Close()
	open := mavenhttp.New(demoRepo)
	defer open.Close()
	authURL := strings.Replace(srv.URL(), "http://", "http://bob:s3cret-pw@", 1)
	for _, tc := range []struct {
		name     string
		repo     string
		existing os.FileMode // 0: the cache does not exist yet
		wantMode os.FileMode
		warn     bool
	}{
		{"credentials, new cache", authURL, 0, 0o700, false},
		{"no credentials, new cache", open.URL(), 0, 0o755, false},
		{"credentials, cache open to others", authURL, 0o755, 0o700, true},
		{"credentials, private cache", authURL, 0o700, 0o700, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := syscall.Umask(0o022)
			defer syscall.Umask(old)
			cache := filepath.Join(t.TempDir(), "cache")
			if tc.existing != 0 {
				if err := os.Mkdir(cache, tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			req := demoRequest(t, cache, filepath.Join(t.TempDir(), "prebake.lock"))
			req.Repositories = []string{tc.repo}
			var log logLines
			if _, err := Resolve(context.Background(), req, WithLogger(&log)); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{"", "blobs", "blobs/sha256", "index", "tmp", "locks"} {
				info, err := os.Stat(filepath.Join(cache, d))
				if err != nil {
					t.Fatal(err)
				}
				if d == "" && tc.existing != 0 {
					continue // an existing cache keeps its mode
				}
				want := tc.wantMode
				if d == "tmp" || d == "locks" {
					want = 0o700 // always the user's own (N1, N6)
				}
				if got := info.Mode().Perm(); got != want {
					t.Errorf("%s: mode %04o, want %04o", filepath.Join(cache, d), got, want)
				}
			}
			warned := strings.Contains(strings.Join(log, "\n"), "open to other users")
			if warned != tc.warn {
				t.Errorf("warning printed = %v, want %v; log:\n%s", warned, tc.warn, strings.Join(log, "\n"))
			}
			if strings.Contains(strings.Join(log, "\n"), "s3cret-pw") {
				t.Error("the log holds the password")
			}
		})
	}
}
