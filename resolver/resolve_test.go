package resolver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/lock"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
)

// flatGraph is a graph builder without transitivity: each coordinate's POM
// is looked up through the Source and its jar listed. It lets these tests
// exercise the download and lock flow independently of graph.go.
func flatGraph(ctx context.Context, req Request, src Source, log Logger) (*Graph, error) {
	g := &Graph{}
	for _, p := range req.Packages {
		for _, c := range strings.Split(p, ",") {
			f := strings.Split(c, ":")
			if len(f) != 3 {
				return nil, fmt.Errorf("bad coordinate %q", c)
			}
			pom, err := src.POM(ctx, f[0], f[1], f[2])
			if err != nil {
				return nil, err
			}
			g.Roots = append(g.Roots, &Node{Group: f[0], Artifact: f[1], Version: f[2]})
			g.Artifacts = append(g.Artifacts, ArtifactRef{Group: f[0], Artifact: f[1], Version: f[2], Ext: "jar", Repo: pom.Repo})
		}
	}
	return g, nil
}

// flatOpts is fastOpts with the flat graph builder: the download and lock
// flow without Ivy's graph.
func flatOpts(extra ...Option) []Option {
	return fastOpts(append(extra, withGraphBuilder(flatGraph))...)
}

func TestResolveLockFlow(t *testing.T) {
	a := m2test.New(t)
	a.Module("org.x", "b", "1.0")
	a.Module("org.x", "a", "2.0")
	srv := mavenhttp.New(a.Dir, mavenhttp.WithBasicAuth("bob", "s3cret-pw"))
	defer srv.Close()
	authURL := strings.Replace(srv.URL(), "http://", "http://bob:s3cret-pw@", 1)
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "prebake.lock")
	req := Request{
		Packages:              []string{"org.x:b:1.0,org.x:a:2.0"},
		Repositories:          []string{authURL},
		NoDefaultRepositories: true,
		LockPath:              lockPath,
		CacheDir:              filepath.Join(dir, "cache"),
	}
	ctx := context.Background()
	log := &m2test.LogBuf{}

	// Cold: resolves, downloads, writes the lock.
	res, err := Resolve(ctx, req, flatOpts(WithLogger(log))...)
	if err != nil {
		t.Fatal(err)
	}
	if res.FromLock {
		t.Error("cold resolve says FromLock")
	}
	data, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data)+log.String(), "s3cret") || strings.Contains(string(data), "bob") {
		t.Errorf("lock or log holds credentials:\n%s\n%s", data, log)
	}
	got := res.Lock.Artifacts
	want := []lock.Artifact{
		{Coord: "org.x:a:2.0", File: "org.x_a-2.0.jar", Repository: srv.URL(), Sha256: m2test.Sha256Hex([]byte("jar of org.x:a:2.0")), Size: 18},
		{Coord: "org.x:b:1.0", File: "org.x_b-1.0.jar", Repository: srv.URL(), Sha256: m2test.Sha256Hex([]byte("jar of org.x:b:1.0")), Size: 18},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lock artifacts (-want +got):\n%s", d)
	}
	for i, p := range res.Paths {
		if p != blobcache.BlobPath(req.CacheDir, want[i].Sha256) {
			t.Errorf("path %d = %s", i, p)
		}
		if b, err := os.ReadFile(p); err != nil || m2test.Sha256Hex(b) != want[i].Sha256 {
			t.Errorf("blob %s: %v", p, err)
		}
	}
	if res.Lock.Inputs.Repositories[0] != srv.URL() {
		t.Errorf("inputs repositories %v", res.Lock.Inputs.Repositories)
	}

	// Warm: a matching lock and a filled cache make zero requests.
	srv.Reset()
	res2, err := Resolve(ctx, req, flatOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	if !res2.FromLock || res2.Graph != nil {
		t.Errorf("warm resolve did not use the lock: %+v", res2)
	}
	if d := cmp.Diff(res.Paths, res2.Paths); d != "" {
		t.Errorf("warm paths (-cold +warm):\n%s", d)
	}
	if n := srv.Requests(); n != 0 {
		t.Errorf("warm resolve made %d requests, want 0", n)
	}

	// The same with other credentials: the inputs have no userinfo.
	req2 := req
	req2.Repositories = []string{strings.Replace(srv.URL(), "http://", "http://alice:other@", 1)}
	if res3, err := Resolve(ctx, req2, flatOpts()...); err != nil || !res3.FromLock {
		t.Errorf("other credentials: FromLock=%v err=%v", res3 != nil && res3.FromLock, err)
	}

	// A lost blob is fetched again from the lock's repository only.
	if err := os.Remove(res.Paths[0]); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	if _, err := Resolve(ctx, req, flatOpts()...); err != nil {
		t.Fatal(err)
	}
	if n, jar := srv.Requests(), srv.Count("/org/x/a/2.0/a-2.0.jar"); n != 1 || jar != 1 {
		t.Errorf("refetch made %d requests (%d for the jar), want exactly the jar", n, jar)
	}

	// Offline with a missing blob: a clear error, no request.
	os.Remove(res.Paths[1])
	srv.Reset()
	off := req
	off.Offline = true
	_, err = Resolve(ctx, off, flatOpts()...)
	if err == nil || errdefs.KindOf(err) != errdefs.Unavailable || !strings.Contains(err.Error(), "org.x_b-1.0.jar") || srv.Requests() != 0 {
		t.Errorf("offline: err = %v (code %d), %d requests", err, errdefs.KindOf(err), srv.Requests())
	}

	// Frozen with changed inputs: 78, saying what changed.
	frozen := req
	frozen.Frozen = true
	frozen.Packages = []string{"org.x:b:1.0"}
	_, err = Resolve(ctx, frozen, flatOpts()...)
	if errdefs.KindOf(err) != errdefs.Stale || !strings.Contains(err.Error(), "packages changed from [org.x:b:1.0,org.x:a:2.0] to [org.x:b:1.0]") {
		t.Errorf("frozen stale: err = %v (code %d)", err, errdefs.KindOf(err))
	}
	frozen.LockPath = filepath.Join(dir, "missing.lock")
	_, err = Resolve(ctx, frozen, flatOpts()...)
	if errdefs.KindOf(err) != errdefs.Stale || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("frozen missing: err = %v (code %d)", err, errdefs.KindOf(err))
	}

	// Stale without --frozen: resolves again and rewrites the lock.
	stale := req
	stale.Packages = []string{"org.x:b:1.0"}
	res4, err := Resolve(ctx, stale, flatOpts()...)
	if err != nil || res4.FromLock || len(res4.Lock.Artifacts) != 1 {
		t.Fatalf("stale: %+v %v", res4, err)
	}
	l, err := lock.Read(lockPath)
	if err != nil || l.Inputs.Packages[0] != "org.x:b:1.0" || len(l.Inputs.Packages) != 1 {
		t.Errorf("rewritten lock: %+v %v", l, err)
	}

	// Retrieve materialises Spark file names as hard links.
	if _, err := FetchLocked(ctx, res.Lock, Request{CacheDir: req.CacheDir, Repositories: []string{authURL}}, flatOpts()...); err != nil {
		t.Fatal(err)
	}
	rdir, paths, err := blobcache.Retrieve(ctx, res.Lock, req.CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	if rdir != filepath.Join(req.CacheDir, "retrieve", res.Lock.Hash()) {
		t.Errorf("retrieve dir %s", rdir)
	}
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if filepath.Base(p) != want[i].File || err != nil || m2test.Sha256Hex(b) != want[i].Sha256 {
			t.Errorf("retrieved %s: %v", p, err)
		}
	}
	if _, _, err := blobcache.Retrieve(ctx, res.Lock, req.CacheDir); err != nil {
		t.Errorf("second retrieve: %v", err)
	}
}

func TestFetchLockedChecksMismatch(t *testing.T) {
	a := m2test.New(t)
	a.Module("org.x", "a", "1.0")
	srv := mavenhttp.New(a.Dir)
	defer srv.Close()
	lock := &lock.File{Artifacts: []lock.Artifact{{Coord: "org.x:a:1.0", File: "org.x_a-1.0.jar", Repository: srv.URL(), Sha256: strings.Repeat("ab", 32), Size: 18}}}
	cache := t.TempDir()
	_, err := FetchLocked(context.Background(), lock, Request{CacheDir: cache}, fastOpts()...)
	if !errors.Is(err, ErrChecksumMismatch) || !strings.Contains(err.Error(), srv.URL()+"org/x/a/1.0/a-1.0.jar") {
		t.Fatalf("err = %v, want a mismatch naming the URL", err)
	}
	if _, err := os.Stat(blobcache.BlobPath(cache, lock.Artifacts[0].Sha256)); err == nil {
		t.Error("a blob exists under the wrong hash")
	}
}

// helperEnv switches the test binary into a helper process (see
// TestHelperProcess).
const helperEnv = "PREBAKE_RESOLVER_HELPER"

// TestHelperProcess is not a test: it is the other OS process of the
// multi-process cache tests, started by re-executing the test binary.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		return
	}
	req := Request{
		Packages:              strings.Split(os.Getenv("HELPER_PACKAGES"), " "),
		Repositories:          []string{os.Getenv("HELPER_REPO")},
		NoDefaultRepositories: true,
		CacheDir:              os.Getenv("HELPER_CACHE"),
	}
	res, err := Resolve(context.Background(), req, WithRetry(2, 10*time.Millisecond), withGraphBuilder(flatGraph))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(res.Lock.Artifacts)
	os.Exit(0)
}

func helperCmd(t *testing.T, repo, cache string, packages ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "HELPER_REPO="+repo, "HELPER_CACHE="+cache, "HELPER_PACKAGES="+strings.Join(packages, " "))
	return cmd
}

func TestTwoProcessesShareOneCache(t *testing.T) {
	a := m2test.New(t)
	var pkgs []string
	for i := range 12 {
		a.Module("org.x", fmt.Sprintf("m%d", i), "1.0")
		pkgs = append(pkgs, fmt.Sprintf("org.x:m%d:1.0", i))
	}
	srv := mavenhttp.New(a.Dir, mavenhttp.WithDelay(20*time.Millisecond))
	defer srv.Close()
	cache := t.TempDir()
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := helperCmd(t, srv.URL(), cache, pkgs...)
			cmd.Stderr = os.Stderr
			outs[i], errs[i] = cmd.Output()
		}()
	}
	wg.Wait()
	var locks [2][]lock.Artifact
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("process %d: %v", i, errs[i])
		}
		if err := json.Unmarshal(outs[i], &locks[i]); err != nil {
			t.Fatalf("process %d output %q: %v", i, outs[i], err)
		}
	}
	if d := cmp.Diff(locks[0], locks[1]); d != "" || len(locks[0]) != 12 {
		t.Fatalf("the processes disagree (%d artifacts):\n%s", len(locks[0]), d)
	}
	for _, x := range locks[0] {
		b, err := os.ReadFile(blobcache.BlobPath(cache, x.Sha256))
		if err != nil || m2test.Sha256Hex(b) != x.Sha256 {
			t.Errorf("blob of %s: %v", x.File, err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "tmp")); len(ents) != 0 {
		t.Errorf("temp files left: %v", ents)
	}
}

func TestKilledMidDownloadLeavesNoPartialFile(t *testing.T) {
	a := m2test.New(t)
	a.Module("org.x", "big", "1.0")
	srv := mavenhttp.New(a.Dir)
	defer srv.Close()
	const jar = "/org/x/big/1.0/big-1.0.jar"
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	hang := mavenhttp.Hang([]byte("partial jar bytes"), 1<<20, release)
	srv.SetFault(jar, func(w http.ResponseWriter, r *http.Request, n int) bool {
		started <- struct{}{}
		return hang(w, r, n)
	})
	cacheDir := t.TempDir()
	cmd := helperCmd(t, srv.URL(), cacheDir, "org.x:big:1.0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the helper never requested the jar")
	}
	// Wait until the partial bytes reached the helper's temp file.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ents, _ := os.ReadDir(filepath.Join(cacheDir, "tmp"))
		if len(ents) > 0 {
			if info, err := ents[0].Info(); err == nil && info.Size() > 0 {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// Nothing partial is visible: no blob and no index entry for the jar.
	u := srv.URL() + jar[1:]
	c := &blobcache.Cache{Dir: cacheDir}
	if _, ok := c.Lookup(u); ok {
		t.Errorf("the killed download is indexed")
	}
	ents, _ := os.ReadDir(filepath.Join(cacheDir, "blobs", "sha256"))
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(cacheDir, "blobs", "sha256", e.Name()))
		if m2test.Sha256Hex(b) != e.Name() {
			t.Errorf("blob %s does not match its name", e.Name())
		}
		if strings.Contains(string(b), "partial jar bytes") {
			t.Errorf("the partial jar is visible as blob %s", e.Name())
		}
	}

	// The next process completes the download.
	srv.SetFault(jar, nil)
	out, err := helperCmd(t, srv.URL(), cacheDir, "org.x:big:1.0").Output()
	if err != nil {
		t.Fatalf("second helper: %v", err)
	}
	var arts []lock.Artifact
	if err := json.Unmarshal(out, &arts); err != nil || len(arts) != 1 || arts[0].Sha256 != m2test.Sha256Hex([]byte("jar of org.x:big:1.0")) {
		t.Fatalf("second helper: %s %v", out, err)
	}
}

// TestOptionErrorsAreUsage: a bad option is a usage error (errdefs.BadArgument,
// exit 64 in cmd) naming the option, not an internal one.
func TestOptionErrorsAreUsage(t *testing.T) {
	for name, opt := range map[string]Option{
		"resolver.WithMaxPerHost": WithMaxPerHost(0),
		"resolver.WithRetry":      WithRetry(0, 0),
		"resolver.WithParallel":   WithParallel(0),
	} {
		_, err := Resolve(context.Background(), Request{Packages: []string{"org.x:a:1.0"}, CacheDir: t.TempDir()}, opt)
		if !errors.Is(err, errdefs.BadArgument) || errdefs.OptionOf(err) != name {
			t.Errorf("%s: err = %v (kind %v, option %q), want BadArgument naming it", name, err, errdefs.KindOf(err), errdefs.OptionOf(err))
		}
	}
}
