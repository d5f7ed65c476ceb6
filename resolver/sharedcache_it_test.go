//go:build linux

package resolver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
)

// The uids of audit 3's N1: the attacker (nobody) and the victim (daemon).
const (
	attacker = 65534
	victim   = 1
)

// sharedWorld is a directory every uid may traverse, with the prebake
// binary and a copy of the demo repository.
type sharedWorld struct {
	dir, bin, repo string
}

func newSharedWorld(t *testing.T) *sharedWorld {
	t.Helper()
	testenv.RequireIT(t)
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root, to run prebake as two other uids")
	}
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := &sharedWorld{dir: dir, bin: sharedPrebake(t), repo: filepath.Join(dir, "demo-repo")}
	if out, err := exec.Command("cp", "-r", "../testdata/demo-repo", w.repo).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return w
}

// sharedPrebake is the CLI the users run: $PREBAKE_SHAREDCACHE_BIN, or
// the one built once per test binary (in a 0755 directory).
func sharedPrebake(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("PREBAKE_SHAREDCACHE_BIN"); b != "" {
		return b
	}
	return testenv.Prebake(t)
}

func TestMain(m *testing.M) { testenv.Main(m) }

// mkdir makes a directory owned by uid with mode (chmod, past the umask).
func (w *sharedWorld) mkdir(t *testing.T, name string, mode os.FileMode, uid int) string {
	t.Helper()
	p := filepath.Join(w.dir, name)
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs prebake as uid, in a home of its own, and returns its stdout,
// stderr and exit code.
func (w *sharedWorld) run(t *testing.T, uid int, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return w.runCmd(t, uid, exec.Command(w.bin, args...))
}

// sh runs a shell command as uid.
func (w *sharedWorld) sh(t *testing.T, uid int, script string) (stdout, stderr string, code int) {
	t.Helper()
	return w.runCmd(t, uid, exec.Command("sh", "-c", script))
}

func (w *sharedWorld) runCmd(t *testing.T, uid int, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	home := w.mkdir(t, fmt.Sprintf("home-%d", uid), 0o700, uid)
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return out.String(), errb.String(), code
}

// demo are the flags of the audit's runs.
func (w *sharedWorld) demo(cache string) []string {
	return []string{"--no-default-repositories", "--repositories", "file://" + w.repo + "/", "--cache", cache}
}

// argAfter is the word after flag in a printed spark-submit command line
// (the paths in these tests need no quoting).
func argAfter(t *testing.T, line, flag string) string {
	t.Helper()
	f := strings.Fields(line)
	for i := range f[:len(f)-1] {
		if f[i] == flag {
			return f[i+1]
		}
	}
	t.Fatalf("no %s in %q", flag, line)
	return ""
}

// assertNotSwappable checks that no directory above path can be changed by
// the attacker: each is owned by the victim or root, and open to no one
// else unless sticky (then the next one is the victim's or root's).
func assertNotSwappable(t *testing.T, path string) {
	t.Helper()
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		info, err := os.Lstat(d)
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := cachedir.Owner(d)
		if info.Mode()&os.ModeSymlink != 0 || (uid != victim && uid != 0) || (info.Mode().Perm()&0o022 != 0 && info.Mode()&os.ModeSticky == 0) {
			t.Errorf("%s (above %s): owner %d, mode %v: the attacker could swap what it holds", d, path, uid, info.Mode())
		}
		if d == "/" {
			return
		}
	}
}

// N1 (a): an attacker's symbolic link as <cache>/tmp of a shared cache
// (1777) is not followed: the victim's old files are not deleted, and no
// download goes through the link.
func TestITSharedCacheTmpSymlink(t *testing.T) {
	w := newSharedWorld(t)
	sc := w.mkdir(t, "sc2", 0o777|os.ModeSticky, 0)
	victimDir := w.mkdir(t, "victimdir", 0o755, victim)
	report := filepath.Join(victimDir, "report-2026.txt")
	if err := os.WriteFile(report, []byte("precious report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(report, old, old)
	os.Lchown(report, victim, victim)
	if _, errs, code := w.sh(t, attacker, "ln -s "+victimDir+" "+sc+"/tmp"); code != 0 {
		t.Fatalf("attacker's ln: %d %s", code, errs)
	}
	out, errs, code := w.run(t, victim, append([]string{"resolve", "-q", "-o", "names"}, append(w.demo(sc), "org.slf4j:slf4j-api:2.0.7")...)...)
	if code != 0 || strings.TrimSpace(out) != "org.slf4j_slf4j-api-2.0.7.jar" {
		t.Fatalf("victim's resolve: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	ents, _ := os.ReadDir(victimDir)
	if len(ents) != 1 || ents[0].Name() != "report-2026.txt" {
		t.Errorf("victim's directory now holds %v, want only report-2026.txt (the sweep or a download followed the link)", ents)
	}
}

// N1 (b): a retrieve directory the attacker made first in a shared cache is
// not used: the jar paths the victim's rewrite prints sit in directories
// only the victim (or root) can change, and the attacker's swap fails.
func TestITSharedCacheRetrieveDir(t *testing.T) {
	w := newSharedWorld(t)
	sc := w.mkdir(t, "sc", 0o777|os.ModeSticky, 0)
	w.mkdir(t, "sc/retrieve", 0o777, attacker)
	out, errs, code := w.run(t, victim, append(append([]string{"rewrite"}, w.demo(sc)...), "--", "--master", "local[1]", "--packages", "org.slf4j:slf4j-api:2.0.7", "app.jar")...)
	if code != 0 {
		t.Fatalf("victim's rewrite: exit %d, stderr %s", code, errs)
	}
	jar := argAfter(t, out, "--jars")
	if !strings.HasPrefix(jar, filepath.Join(sc, fmt.Sprintf("u%d", victim), "retrieve")+"/") {
		t.Errorf("jar path %s: want it under the victim's own %s/u%d", jar, sc, victim)
	}
	assertNotSwappable(t, jar)
	hashDir := filepath.Dir(jar)
	_, _, code = w.sh(t, attacker, fmt.Sprintf("mv %[1]s %[1]s.old && mkdir %[1]s && echo EVIL-JAR-FROM-nobody > %[2]s", hashDir, jar))
	if code == 0 {
		t.Errorf("the attacker's swap of %s succeeded", hashDir)
	}
	data, err := os.ReadFile(jar)
	if err != nil || bytes.Contains(data, []byte("EVIL")) {
		t.Errorf("%s after the attack: %v, %q", jar, err, data[:min(len(data), 40)])
	}
}

// N1 (c): a rewrite directory the attacker made first: the edited
// properties file the victim's rewrite prints cannot be replaced.
func TestITSharedCacheRewriteDir(t *testing.T) {
	w := newSharedWorld(t)
	sc := w.mkdir(t, "sc3", 0o777|os.ModeSticky, 0)
	if _, errs, code := w.sh(t, attacker, "umask 0; mkdir "+sc+"/rewrite"); code != 0 {
		t.Fatalf("attacker's mkdir: %s", errs)
	}
	home := w.mkdir(t, fmt.Sprintf("home-%d", victim), 0o700, victim)
	conf := filepath.Join(home, "job.conf")
	if err := os.WriteFile(conf, []byte("spark.app.name=victim\nspark.jars.packages=org.slf4j:slf4j-api:2.0.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Lchown(conf, victim, victim)
	out, errs, code := w.run(t, victim, append(append([]string{"rewrite"}, w.demo(sc)...), "--", "--master", "local[1]", "--properties-file", conf, "app.jar")...)
	if code != 0 {
		t.Fatalf("victim's rewrite: exit %d, stderr %s", code, errs)
	}
	props := argAfter(t, out, "--properties-file")
	if props == conf {
		t.Fatalf("rewrite printed the original %s, want an edited copy in the cache", conf)
	}
	if strings.HasPrefix(props, sc+"/rewrite/") {
		t.Errorf("properties file %s is in the attacker's directory", props)
	}
	assertNotSwappable(t, props)
	_, _, code = w.sh(t, attacker, fmt.Sprintf("printf 'spark.app.name=victim\\nspark.driver.extraJavaOptions=-javaagent:/opt/evil/agent.jar\\n' > %[1]s/x.tmp && mv -f %[1]s/x.tmp %[2]s", filepath.Dir(props), props))
	if code == 0 {
		t.Errorf("the attacker replaced %s", props)
	}
	if data, err := os.ReadFile(props); err != nil || bytes.Contains(data, []byte("javaagent")) {
		t.Errorf("%s after the attack: %v, %q", props, err, data)
	}
}

// A shared cache directory (1777, root's) works for two users, each with a
// cache of their own (0700); the victim's own cache directory made first
// by the attacker is refused (73), naming it and its owner.
func TestITSharedCacheTwoUsers(t *testing.T) {
	w := newSharedWorld(t)
	sc := w.mkdir(t, "sc5", 0o777|os.ModeSticky, 0)
	for _, uid := range []int{attacker, victim} {
		out, errs, code := w.run(t, uid, append(append([]string{"rewrite"}, w.demo(sc)...), "--", "--master", "local[1]", "--packages", "org.slf4j:slf4j-api:2.0.7", "app.jar")...)
		if code != 0 {
			t.Fatalf("uid %d: exit %d, stderr %s", uid, code, errs)
		}
		own := filepath.Join(sc, fmt.Sprintf("u%d", uid))
		if jar := argAfter(t, out, "--jars"); !strings.HasPrefix(jar, own+"/") {
			t.Errorf("uid %d: jar %s, want it under %s", uid, jar, own)
		}
		if info, err := os.Stat(own); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want mode 0700", own, info, err)
		}
	}
	sc4 := w.mkdir(t, "sc4", 0o777|os.ModeSticky, 0)
	w.mkdir(t, fmt.Sprintf("sc4/u%d", victim), 0o777, attacker)
	_, errs, code := w.run(t, victim, append([]string{"resolve", "-q", "-o", "names"}, append(w.demo(sc4), "org.slf4j:slf4j-api:2.0.7")...)...)
	want := fmt.Sprintf("unsafe cache directory %s/u%d: a directory owned by uid %d (nobody), not by you (uid %d (daemon))", sc4, victim, attacker, victim)
	if code != 73 || !strings.Contains(errs, want) {
		t.Errorf("victim's own directory made by the attacker: exit %d, stderr %s; want 73 and %q", code, errs, want)
	}
}

// R4 (review 2, finding 4): with credentials, a cache another user owns is
// refused (77) before any request, naming its owner; the password is not
// printed.
func TestITForeignCacheWithCredentials(t *testing.T) {
	w := newSharedWorld(t)
	port := testenv.FreePort(t)
	for _, owner := range []int{victim, 0} {
		cache := w.mkdir(t, fmt.Sprintf("cache-of-%d", owner), 0o755, owner)
		_, errs, code := w.run(t, attacker, "resolve", "-q", "--no-default-repositories", "--repositories", fmt.Sprintf("http://mallory:WRONG-pw@127.0.0.1:%d/", port), "--cache", cache, "org.slf4j:slf4j-api:2.0.7")
		want := fmt.Sprintf("cache %s belongs to %s, not to you (uid %d (nobody)), and the repositories carry credentials", cache, cachedir.Describe(owner), attacker)
		if code != 77 || !strings.Contains(errs, want) {
			t.Errorf("cache of uid %d: exit %d, stderr %s; want 77 and %q", owner, code, errs, want)
		}
		if strings.Contains(errs, "WRONG-pw") {
			t.Errorf("stderr holds the password: %s", errs)
		}
	}
	// A directory of root's open to all without the sticky bit (a
	// Kubernetes emptyDir, 0777): the user's own 0700 directories in it,
	// with a warning; the run goes on to the repository (refused: 69).
	empty := w.mkdir(t, "emptydir", 0o777, 0)
	_, errs, code := w.run(t, attacker, "resolve", "--no-default-repositories", "--repositories", fmt.Sprintf("http://mallory:WRONG-pw@127.0.0.1:%d/", port), "--cache", empty, "org.slf4j:slf4j-api:2.0.7")
	want := fmt.Sprintf("warning: cache directory %s is writable by group and others and not sticky (mode 0777)", empty)
	if code != 69 || !strings.Contains(errs, want) {
		t.Errorf("emptyDir-like cache: exit %d, stderr %s; want 69 and %q", code, errs, want)
	}
	if info, err := os.Stat(filepath.Join(empty, "blobs")); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("%s/blobs: %v %v, want mode 0700", empty, info, err)
	}
}

// N6: a process holding a download lock does not stall a resolve for
// longer than the bound (30 s): the wait is said at once under -v, and the
// download goes on unlocked.
func TestITHeldDownloadLock(t *testing.T) {
	testenv.RequireIT(t)
	dir := t.TempDir()
	bin := sharedPrebake(t)
	demoRepo, _ := filepath.Abs("../testdata/demo-repo")
	srv := mavenhttp.New(demoRepo)
	defer srv.Close()
	cache := filepath.Join(dir, "cache")
	c, err := blobcache.Open(cache, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := srv.URL() + "org/slf4j/slf4j-api/2.0.7/slf4j-api-2.0.7.pom"
	f, err := blobcache.OpenLockFile(c.LockPath(u) + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "resolve", "-v", "-o", "names", "--no-default-repositories", "--repositories", srv.URL(), "--cache", cache, "org.slf4j:slf4j-api:2.0.7")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var firstWait time.Duration
	var lines []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "waiting for the download lock") && firstWait == 0 {
			firstWait = time.Since(start)
		}
		lines = append(lines, sc.Text())
	}
	io.Copy(io.Discard, stderr)
	err = cmd.Wait()
	took := time.Since(start)
	t.Logf("resolve with a held lock: %v (first wait line after %v), exit %v", took, firstWait, err)
	if err != nil || strings.TrimSpace(out.String()) != "org.slf4j_slf4j-api-2.0.7.jar" {
		t.Fatalf("resolve: %v, stdout %q\n%s", err, out.String(), strings.Join(lines, "\n"))
	}
	if took < lockWaitMax || took > lockWaitMax+15*time.Second {
		t.Errorf("took %v, want about the bound %v", took, lockWaitMax)
	}
	if firstWait == 0 || firstWait > 3*time.Second {
		t.Errorf("the -v wait line came after %v, want at once", firstWait)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"held by another process for 5s now; giving up after 30s", "is still held by another process after 30s; downloading without it"} {
		if !strings.Contains(all, want) {
			t.Errorf("stderr lacks %q:\n%s", want, all)
		}
	}
}

// lockWaitMax is the download lock's default wait bound (resolver/cache).
const lockWaitMax = 30 * time.Second
