package s3store_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/s3store/s3test"
)

// fakeProgress records every task: its total, the bytes added and whether
// it ended well.
type fakeProgress struct {
	mu    sync.Mutex
	tasks map[string]*fakeTask
}

type fakeTask struct {
	p             *fakeProgress
	Total, Sent   int64
	Ended, Failed bool
}

func (p *fakeProgress) Start(name string, total int64) progress.Task {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tasks == nil {
		p.tasks = map[string]*fakeTask{}
	}
	t := &fakeTask{p: p, Total: total}
	p.tasks[name] = t
	return t
}

func (t *fakeTask) Add(n int64) { t.p.mu.Lock(); t.Sent += n; t.p.mu.Unlock() }
func (t *fakeTask) Done(err error) {
	t.p.mu.Lock()
	t.Ended, t.Failed = true, err != nil
	t.p.mu.Unlock()
}

// got returns the tasks as name → {total, sent, done, failed}.
func (p *fakeProgress) got() map[string]fakeTask {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]fakeTask{}
	for n, t := range p.tasks {
		out[n] = fakeTask{Total: t.Total, Sent: t.Sent, Ended: t.Ended, Failed: t.Failed}
	}
	return out
}

// wantTasks is one finished task per jar with its size sent.
func wantTasks(lf *lock.File) map[string]fakeTask {
	want := map[string]fakeTask{}
	for _, a := range lf.Artifacts {
		want[a.File] = fakeTask{Total: a.Size, Sent: a.Size, Ended: true}
	}
	return want
}

var taskCmp = cmp.AllowUnexported(fakeTask{})

// checkProgress bakes lock into a store opened with opts plus a fake
// Progress and checks one task per jar whose bytes are the jar's size; a
// second bake (a hit) starts none.
func checkProgress(t *testing.T, storeURL string, lf *lock.File, paths []string, opts ...s3store.Option) {
	t.Helper()
	ctx := context.Background()
	p := &fakeProgress{}
	st, err := s3store.Open(ctx, storeURL, append(opts, s3store.WithProgress(p))...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Bake(ctx, lf, lock.LocalJars(paths))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantTasks(lf), p.got(), taskCmp); diff != "" {
		t.Errorf("upload tasks (-want +got):\n%s", diff)
	}
	var sum int64
	for _, tk := range p.got() {
		sum += tk.Sent
	}
	if manifest, _ := res.Manifest.Marshal(); sum+int64(len(manifest)) != res.BytesSent {
		t.Errorf("tasks report %d jar bytes + %d manifest bytes, BytesSent is %d", sum, len(manifest), res.BytesSent)
	}
	p2 := &fakeProgress{}
	st2, err := s3store.Open(ctx, storeURL, append(opts, s3store.WithProgress(p2))...)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := st2.Bake(ctx, lf, lock.LocalJars(paths)); err != nil || !res.Hit {
		t.Fatalf("second bake: %+v, %v", res, err)
	}
	if got := p2.got(); len(got) != 0 {
		t.Errorf("a hit started tasks: %v", got)
	}
}

func TestProgressBytesFileStore(t *testing.T) {
	lf, paths := s3test.Fixture(t, t.TempDir(), 21,
		s3test.Jar{Name: "a", Size: 300 << 10}, s3test.Jar{Name: "b", Size: 7}, s3test.Jar{Name: "empty", Size: 0})
	checkProgress(t, "file://"+t.TempDir(), lf, paths)
}

func TestProgressBytesFakeS3Multipart(t *testing.T) {
	endpoint, ct := fakeS3(t, "jars")
	// 5 MiB parts from 5 MiB: the 12 MiB jar goes up in three parts.
	lf, paths := s3test.Fixture(t, t.TempDir(), 22,
		s3test.Jar{Name: "big", Size: 12<<20 + 123}, s3test.Jar{Name: "small", Size: 40 << 10})
	checkProgress(t, "s3://jars/p", lf, paths, s3store.WithEndpoint(endpoint), s3store.WithPathStyle(true),
		s3store.WithStaticCredentials("k", "s"), s3store.WithHTTPClient(&http.Client{Transport: ct}),
		s3store.WithPartSize(5<<20, 5<<20))
}

// TestProgressPlainLines bakes through a non-terminal reporter: -v prints
// one line per jar and no bar escape codes; -q prints nothing.
func TestProgressPlainLines(t *testing.T) {
	lf, paths := s3test.Fixture(t, t.TempDir(), 23, s3test.Jar{Name: "a", Size: 10 << 10}, s3test.Jar{Name: "b", Size: 3})
	for _, tt := range []struct {
		level progress.Level
		want  []string // substrings, one line each
	}{
		{progress.Quiet, nil},
		{progress.Normal, []string{"jars sent"}},
		{progress.Verbose, []string{"uploading " + lf.Artifacts[0].File, "uploading " + lf.Artifacts[1].File,
			lf.Artifacts[0].File + ": 10240 bytes in ", lf.Artifacts[1].File + ": 3 bytes in ", "jars sent"}},
	} {
		var buf bytes.Buffer
		rep, err := progress.New(&buf, tt.level, progress.WithTerminal(false))
		if err != nil {
			t.Fatal(err)
		}
		st, err := s3store.Open(context.Background(), "file://"+t.TempDir(), s3store.WithLogger(rep), s3store.WithProgress(rep))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Bake(context.Background(), lf, lock.LocalJars(paths)); err != nil {
			t.Fatal(err)
		}
		rep.Wait()
		out := buf.String()
		if strings.Contains(out, "\x1b") || strings.Contains(out, "\r") {
			t.Errorf("level %d: escape codes in plain output %q", tt.level, out)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			lines = nil
		}
		if len(lines) != len(tt.want) {
			t.Errorf("level %d: %d lines, want %d:\n%s", tt.level, len(lines), len(tt.want), out)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("level %d: output lacks %q:\n%s", tt.level, w, out)
			}
		}
	}
}

// TestITProgressMultipart counts the bytes of a multipart upload to the
// real S3 server.
func TestITProgressMultipart(t *testing.T) {
	testenv.RequireIT(t)
	srv := s3test.Start(t)
	bucket := srv.Bucket(t, "progress")
	lf, paths := s3test.Fixture(t, t.TempDir(), 24,
		s3test.Jar{Name: "big", Size: 21<<20 + 5}, s3test.Jar{Name: "small", Size: 2 << 10})
	proxy := srv.NewProxy(t)
	var parts atomic.Int32
	proxy.SetFault(func(r *http.Request) s3test.Action {
		if r.Method == http.MethodPut && r.URL.Query().Get("partNumber") != "" {
			parts.Add(1)
		}
		return s3test.Forward
	})
	checkProgress(t, "s3://"+bucket+"/team/cache", lf, paths,
		s3store.WithEndpoint(proxy.URL), s3store.WithPathStyle(true), s3store.WithRegion("us-east-1"),
		s3store.WithStaticCredentials(s3test.AccessKey, s3test.SecretKey))
	// 21 MiB in the default 8 MiB parts.
	if got := parts.Load(); got != 3 {
		t.Errorf("%d parts uploaded, want 3 (a multipart upload)", got)
	}
}
