package resolver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/lock"
)

// taskRec is what a fake Progress saw of one task.
type taskRec struct {
	Total, Sent   int64
	Ended, Failed bool
}

// recProgress is a Progress recording its tasks by name.
type recProgress struct {
	mu    sync.Mutex
	tasks map[string]*taskRec
}

func (p *recProgress) Start(name string, total int64) progress.Task {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tasks == nil {
		p.tasks = map[string]*taskRec{}
	}
	r := &taskRec{Total: total}
	p.tasks[name] = r
	return recTask{p, r}
}

func (p *recProgress) got() map[string]taskRec {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]taskRec{}
	for n, r := range p.tasks {
		out[n] = *r
	}
	return out
}

type recTask struct {
	p *recProgress
	r *taskRec
}

func (t recTask) Add(n int64) { t.p.mu.Lock(); t.r.Sent += n; t.p.mu.Unlock() }
func (t recTask) Done(err error) {
	t.p.mu.Lock()
	t.r.Ended, t.r.Failed = true, err != nil
	t.p.mu.Unlock()
}

// progressRepo serves two modules whose jars are bigger than one read.
func progressRepo(t *testing.T) (*m2test.Repo, map[string]int64) {
	a := m2test.New(t)
	a.Module("org.x", "a", "1.0")
	a.Module("org.x", "b", "2.0")
	sizes := map[string]int64{"org/x/a/1.0/a-1.0.jar": 300<<10 + 7, "org/x/b/2.0/b-2.0.jar": 1}
	for rel, n := range sizes {
		a.Put(rel, bytes.Repeat([]byte{'j'}, int(n)), "sha1")
	}
	return a, sizes
}

func wantDownloads(base string, sizes map[string]int64) map[string]taskRec {
	want := map[string]taskRec{}
	for rel, n := range sizes {
		want[base+rel] = taskRec{Total: n, Sent: n, Ended: true}
	}
	return want
}

// TestProgressDownloads checks one task per jar (no POM or checksum),
// named by its URL without userinfo, whose bytes are the jar's size, even
// when a truncated body is retried; FetchLocked reports the same.
func TestProgressDownloads(t *testing.T) {
	a, sizes := progressRepo(t)
	srv := mavenhttp.New(a.Dir, mavenhttp.WithBasicAuth("bob", "s3cret-pw"))
	defer srv.Close()
	// The first GET of a's jar stops after 1000 of its bytes.
	jar, err := os.ReadFile(filepath.Join(a.Dir, "org/x/a/1.0/a-1.0.jar"))
	if err != nil {
		t.Fatal(err)
	}
	srv.SetFault("/org/x/a/1.0/a-1.0.jar", mavenhttp.Truncated(jar[:1000], len(jar), 1))
	dir := t.TempDir()
	req := Request{
		Packages:              []string{"org.x:a:1.0,org.x:b:2.0"},
		Repositories:          []string{strings.Replace(srv.URL(), "http://", "http://bob:s3cret-pw@", 1)},
		NoDefaultRepositories: true,
		CacheDir:              filepath.Join(dir, "cache"),
	}
	p := &recProgress{}
	res, err := Resolve(context.Background(), req, flatOpts(WithProgress(p))...)
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("/org/x/a/1.0/a-1.0.jar"); n != 2 {
		t.Fatalf("%d GETs of the truncated jar, want 2 (one retry)", n)
	}
	if diff := cmp.Diff(wantDownloads(srv.URL(), sizes), p.got()); diff != "" {
		t.Errorf("download tasks (-want +got):\n%s", diff)
	}

	// FetchLocked into an empty cache reports the same downloads.
	open := mavenhttp.New(a.Dir)
	defer open.Close()
	lf := *res.Lock
	lf.Artifacts = append([]lock.Artifact(nil), res.Lock.Artifacts...)
	for i := range lf.Artifacts {
		lf.Artifacts[i].Repository = open.URL()
	}
	p2 := &recProgress{}
	if _, err := FetchLocked(context.Background(), &lf, Request{CacheDir: t.TempDir()}, flatOpts(WithProgress(p2))...); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantDownloads(open.URL(), sizes), p2.got()); diff != "" {
		t.Errorf("FetchLocked tasks (-want +got):\n%s", diff)
	}
}

// TestProgressPlainLines resolves through a non-terminal reporter: -v
// prints one line per jar, with no bar escape codes and no secret.
func TestProgressPlainLines(t *testing.T) {
	a, sizes := progressRepo(t)
	srv := mavenhttp.New(a.Dir, mavenhttp.WithBasicAuth("bob", "s3cret-pw"))
	defer srv.Close()
	for _, level := range []progress.Level{progress.Quiet, progress.Normal, progress.Verbose} {
		var buf bytes.Buffer
		rep, err := progress.New(&buf, level, progress.WithTerminal(false))
		if err != nil {
			t.Fatal(err)
		}
		req := Request{
			Packages:              []string{"org.x:a:1.0,org.x:b:2.0"},
			Repositories:          []string{strings.Replace(srv.URL(), "http://", "http://bob:s3cret-pw@", 1)},
			NoDefaultRepositories: true,
			CacheDir:              t.TempDir(),
		}
		if _, err := Resolve(context.Background(), req, flatOpts(WithLogger(rep), WithProgress(rep))...); err != nil {
			t.Fatal(err)
		}
		rep.Wait()
		out := buf.String()
		if strings.ContainsAny(out, "\x1b\r") || strings.Contains(out, "s3cret") {
			t.Errorf("level %d: escape codes or a secret in %q", level, out)
		}
		for rel, n := range sizes {
			line := srv.URL() + rel + ": " + strconv.FormatInt(n, 10) + " bytes in "
			if got := strings.Count(out, line); (level == progress.Verbose) != (got == 1) {
				t.Errorf("level %d: %d lines %q in:\n%s", level, got, line, out)
			}
		}
		if level == progress.Quiet && out != "" {
			t.Errorf("-q printed %q", out)
		}
	}
}

// TestITProgressNginx counts the bytes of real downloads from nginx.
func TestITProgressNginx(t *testing.T) {
	testenv.RequireIT(t)
	ng := mavenhttp.StartNginx(t, "testdata/repo", "spark", "n0t-in-any-output")
	dir := t.TempDir()
	req := Request{
		Packages:              []string{jacksonXML.coord},
		Repositories:          []string{strings.Replace(ng.PrivateURL, "http://", "http://spark:n0t-in-any-output@", 1)},
		NoDefaultRepositories: true,
		CacheDir:              filepath.Join(dir, "cache"),
	}
	p := &recProgress{}
	res, err := Resolve(context.Background(), req, WithProgress(p))
	if err != nil {
		t.Fatal(err)
	}
	got := p.got()
	if len(got) != len(res.Lock.Artifacts) {
		t.Errorf("%d tasks for %d jars: %v", len(got), len(res.Lock.Artifacts), got)
	}
	for i, a := range res.Lock.Artifacts {
		fi, err := os.Stat(res.Paths[i])
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for name, r := range got {
			if strings.HasPrefix(name, ng.PrivateURL) && strings.HasSuffix(name, ".jar") && r.Sent == fi.Size() && r.Total == a.Size && r.Ended && !r.Failed {
				found = true
			}
			if strings.Contains(name, "n0t-in-any-output") {
				t.Errorf("task name %q holds the password", name)
			}
		}
		if !found {
			t.Errorf("no finished task of %d bytes for %s: %v", fi.Size(), a.File, got)
		}
	}
}
