package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/lock"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
)

// The security review's reproductions for the cache (finding 3) and the
// exit codes of its §9 that are not lock or POM validation: each command
// exits with the README's code, and a blob modified in the cache never
// leaves it.
func TestAuditExitCodesAndModifiedBlobs(t *testing.T) {
	root, _ := isolatedCLI(t)
	srv := mavenhttp.New(filepath.Join(root, "testdata", "demo-repo"))
	defer srv.Close()
	ctx := context.Background()
	const coord = "org.slf4j:slf4j-api:2.0.7"

	// setup resolves coord over HTTP into a fresh cache with a lock, and
	// returns the flags for it and the locked artifact.
	setup := func(t *testing.T) ([]string, lock.Artifact, string) {
		dir := t.TempDir()
		cache, lockPath := filepath.Join(dir, "cache"), filepath.Join(dir, "prebake.lock")
		flags := []string{"--no-default-repositories", "--repositories", srv.URL(), "--cache", cache, "--lock", lockPath}
		if code, _, errs := runPrebake(ctx, append(append([]string{"resolve", "-q"}, flags...), coord)...); code != 0 {
			t.Fatalf("resolve: exit %d\n%s", code, errs)
		}
		l, err := lock.Read(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		return flags, l.Artifacts[0], cache
	}
	tamper := func(t *testing.T, path string) {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, 0o644)
		if err := os.WriteFile(path, []byte(strings.Repeat("E", int(info.Size()))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hashOf := func(t *testing.T, path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}

	tests := []struct {
		name string
		// run returns the command; prep may change the cache first.
		prep  func(t *testing.T, a lock.Artifact, cache string)
		args  func(flags []string, dir string) []string
		want  int
		msg   string
		after func(t *testing.T, a lock.Artifact, cache, dir, stdout string)
	}{
		{"resolve with no coordinate", nil, func(flags []string, _ string) []string {
			return append([]string{"resolve"}, flags[:5]...)
		}, exitcode.Usage, "no coordinate", nil},
		{"resolve --packages with only a comma", nil, func(flags []string, _ string) []string {
			return append([]string{"resolve", "--packages", ","}, flags[:5]...)
		}, exitcode.Usage, "no coordinate", nil},
		{"locked blob missing with --offline: 69 as the repository cannot be asked", func(t *testing.T, a lock.Artifact, cache string) {
			os.Remove(blobcache.BlobPath(cache, a.Sha256))
		}, func(flags []string, _ string) []string {
			return append(append([]string{"resolve", "--offline"}, flags...), coord)
		}, exitcode.Unavailable, "not in the cache", nil},
		{"modified blob with --offline", func(t *testing.T, a lock.Artifact, cache string) {
			tamper(t, blobcache.BlobPath(cache, a.Sha256))
		}, func(flags []string, _ string) []string {
			return append(append([]string{"resolve", "--offline"}, flags...), coord)
		}, exitcode.DataErr, "run without --offline", nil},
		{"modified blob: bake image repairs it first", func(t *testing.T, a lock.Artifact, cache string) {
			tamper(t, blobcache.BlobPath(cache, a.Sha256))
		}, func(flags []string, dir string) []string {
			return append(append([]string{"bake", "image", "-q", "--base", "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0",
				"--target", "oci:" + filepath.Join(dir, "img")}, flags...), coord)
		}, 0, "", func(t *testing.T, a lock.Artifact, cache, _, _ string) {
			if got := hashOf(t, blobcache.BlobPath(cache, a.Sha256)); got != a.Sha256 {
				t.Errorf("blob hashes to %s after the bake, want it repaired (%s)", got, a.Sha256)
			}
		}},
		{"modified blob: bake s3 uploads the repaired one", func(t *testing.T, a lock.Artifact, cache string) {
			tamper(t, blobcache.BlobPath(cache, a.Sha256))
		}, func(flags []string, dir string) []string {
			return append(append([]string{"bake", "s3", "-q", "--store", "file://" + filepath.Join(dir, "store")}, flags...), coord)
		}, 0, "", func(t *testing.T, a lock.Artifact, _, dir, _ string) {
			p := filepath.Join(dir, "store", "jars", "sha256", a.Sha256, a.File)
			if got := hashOf(t, p); got != a.Sha256 {
				t.Errorf("stored jar hashes to %s, want %s", got, a.Sha256)
			}
		}},
		{"modified retrieve file: rewrite rebuilds it", func(t *testing.T, a lock.Artifact, cache string) {
			l := &lock.File{Artifacts: []lock.Artifact{a}}
			_, paths, err := blobcache.Retrieve(context.Background(), l, cache)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(paths[0]) // replaced, the blob untouched
			if err := os.WriteFile(paths[0], []byte(strings.Repeat("X", int(a.Size))), 0o444); err != nil {
				t.Fatal(err)
			}
		}, func(flags []string, _ string) []string {
			return append(append([]string{"rewrite"}, flags...), "--", "--master", "local[1]", "--packages", coord, "app.jar")
		}, 0, "", func(t *testing.T, a lock.Artifact, _, _, stdout string) {
			for _, w := range strings.Fields(stdout) {
				for _, p := range strings.Split(strings.Trim(w, "'"), ",") {
					if strings.HasSuffix(p, a.File) {
						if got := hashOf(t, strings.TrimPrefix(p, "file:")); got != a.Sha256 {
							t.Errorf("rewrite's %s hashes to %s, want %s", p, got, a.Sha256)
						}
						return
					}
				}
			}
			t.Errorf("no path to %s in %s", a.File, stdout)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flags, a, cache := setup(t)
			if tc.prep != nil {
				tc.prep(t, a, cache)
			}
			dir := t.TempDir()
			code, stdout, stderr := runPrebake(ctx, tc.args(flags, dir)...)
			if code != tc.want || !strings.Contains(stderr, tc.msg) {
				t.Fatalf("exit %d, want %d with %q in stderr\nstdout: %s\nstderr: %s", code, tc.want, tc.msg, stdout, stderr)
			}
			if tc.after != nil {
				tc.after(t, a, cache, dir, stdout)
			}
		})
	}
}

// hostileFiles are the local files of the third review's N10, by name: a
// FIFO (no writer: reading it blocks forever), /dev/zero (endless), a
// directory, and a missing file; each path is a fresh one.
func hostileFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo1")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big") // sparse, over every cap (16 MiB at most)
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 17<<20); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"fifo": fifo, "/dev/zero": "/dev/zero", "directory": sub, "missing": filepath.Join(dir, "missing"), "too large": big}
}

// TestAuditLocalFiles is the review's N10: every local file prebake reads
// (pod templates, token and CA files, kubeconfig, Maven settings, locks,
// prebake.yaml, properties files, --manifest, set files) must be a regular
// file under its cap. A FIFO, /dev/zero, a directory or a file over the
// cap is 65 naming the file, a missing one 66, at once: no hang, no
// out-of-memory.
func TestAuditLocalFiles(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", tmp) // no ~/.kube/config
	t.Setenv("SPARK_CONF_DIR", "")
	t.Setenv("SPARK_HOME", "")
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	const coord = "org.slf4j:slf4j-api:2.0.7"
	k8sDry := func(key string) func(string) []string {
		return func(f string) []string {
			return []string{"submit", "--dry-run", "-o", "yaml", "--spark-version", "3.5.9", "--", "--master", "k8s://https://127.0.0.1:1",
				"--deploy-mode", "cluster", "--conf", "spark.kubernetes.container.image=apache/spark:3.5.9", "--conf", key + "=" + f, "--class", "M", "local:///a.jar"}
		}
	}
	k8sStatus := func(key string) func(string) []string {
		return func(f string) []string {
			return []string{"status", "ns:app-driver", "--master", "k8s://http://127.0.0.1:1", "--conf", key + "=" + f}
		}
	}
	lockFile := filepath.Join(tmp, "prebake.lock")
	if code, _, errs := runPrebake(context.Background(), append(append([]string{"resolve", "-q", "--lock", lockFile}, demo...), coord)...); code != 0 {
		t.Fatalf("resolve for the lock: exit %d\n%s", code, errs)
	}
	tests := []struct {
		name string
		args func(f string) []string
		env  string // set to the file instead of an argument
		// missing is the code for a missing file (0: not a case, a
		// missing lock is one to write).
		missing int
	}{
		{"driver pod template", k8sDry("spark.kubernetes.driver.podTemplateFile"), "", exitcode.NotFound},
		{"executor pod template", k8sDry("spark.kubernetes.executor.podTemplateFile"), "", exitcode.NotFound},
		{"oauthTokenFile", k8sStatus("spark.kubernetes.authenticate.submission.oauthTokenFile"), "", exitcode.NotFound},
		{"caCertFile", func(f string) []string {
			return append(k8sStatus("spark.kubernetes.authenticate.submission.caCertFile")(f), "--conf", "spark.kubernetes.authenticate.submission.oauthToken=t")
		}, "", exitcode.NotFound},
		{"clientCertFile", func(f string) []string {
			key := filepath.Join(tmp, "client.key")
			os.WriteFile(key, []byte("key"), 0o600)
			return append(k8sStatus("spark.kubernetes.authenticate.submission.clientCertFile")(f), "--conf", "spark.kubernetes.authenticate.submission.clientKeyFile="+key)
		}, "", exitcode.NotFound},
		{"kubeconfig", func(string) []string {
			return []string{"status", "ns:app-driver", "--master", "k8s://http://127.0.0.1:1"}
		}, "KUBECONFIG", 0},
		{"kubeconfig, pod without namespace", func(string) []string {
			return []string{"submit", "--status-poll-only", "app-driver", "--", "--master", "k8s://http://127.0.0.1:1"}
		}, "KUBECONFIG", 0},
		{"Maven settings.xml", func(f string) []string { return append(append([]string{"resolve", "--settings", f}, demo...), coord) }, "", exitcode.NotFound},
		{"lock", func(f string) []string { return append(append([]string{"resolve", "--lock", f}, demo...), coord) }, "", 0},
		{"lock with --frozen", func(f string) []string {
			return append(append([]string{"resolve", "--frozen", "--lock", f}, demo...), coord)
		}, "", exitcode.StaleLock},
		{"prebake.yaml", func(f string) []string { return []string{"resolve", "--config", f, coord} }, "", exitcode.NotFound},
		{"--properties-file", func(f string) []string {
			return []string{"rewrite", "--lock", lockFile, "--", "--master", "local[1]", "--properties-file", f, "app.jar"}
		}, "", exitcode.NotFound},
		{"rewrite --manifest", func(f string) []string { return []string{"rewrite", "--lock", lockFile, "--manifest", f} }, "", exitcode.NotFound},
		{"warm --file", func(f string) []string {
			return []string{"warm", "--file", f, "--store", "file://" + filepath.Join(tmp, "store")}
		}, "", exitcode.NotFound},
		{"gc --keep-sets", func(f string) []string {
			return []string{"gc", "--keep-sets", f, "--store", "file://" + filepath.Join(tmp, "store")}
		}, "", exitcode.NotFound},
	}
	for _, tt := range tests {
		for _, kind := range []string{"fifo", "/dev/zero", "directory", "missing", "too large"} {
			want := exitcode.DataErr
			if kind == "missing" {
				if want = tt.missing; want == 0 {
					continue
				}
			}
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				f := hostileFiles(t)[kind]
				args := tt.args(f)
				if tt.env != "" {
					t.Setenv(tt.env, f)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				start := time.Now()
				code, stdout, stderr := runPrebake(ctx, args...)
				took := time.Since(start)
				if code != want || !strings.Contains(stderr, f) {
					t.Errorf("prebake %s: exit %d, want %d naming %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, f, stdout, stderr)
				}
				if took > 2*time.Second {
					t.Errorf("took %s, want < 2s", took)
				}
			})
		}
	}
	// spark-defaults.conf is read only when it is a regular file
	// (Utils.getDefaultPropertiesFile: isFile), as Spark does: a FIFO there
	// is skipped, never read.
	t.Run("spark-defaults.conf FIFO is skipped", func(t *testing.T) {
		conf := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(conf, "spark-defaults.conf"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SPARK_CONF_DIR", conf)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		code, _, stderr := runPrebake(ctx, "rewrite", "--lock", lockFile, "--", "--master", "local[1]", "app.jar")
		if code != 0 || time.Since(start) > 2*time.Second {
			t.Errorf("exit %d after %s, want 0 at once\n%s", code, time.Since(start), stderr)
		}
	})
}

// fakeAPIServer is a Kubernetes API server that creates what is posted
// (a ConfigMap over 1 MiB answers 413 as the real one does) and counts the
// requests; with hang, a POST gets no answer until it is cancelled, and
// seen is closed at the first request.
type fakeAPIServer struct {
	URL      string
	requests atomic.Int32
}

func newFakeAPIServer(t *testing.T, hang bool, seen chan<- struct{}) *fakeAPIServer {
	t.Helper()
	f := &fakeAPIServer{}
	var once sync.Once
	stop := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if seen != nil {
			once.Do(func() { close(seen) })
		}
		if hang && r.Method == http.MethodPost {
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/configmaps") && len(body) > 1<<20:
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}`)
		case r.Method == http.MethodPost: // the body may be protobuf: answer JSON
			kind := map[string]string{"pods": "Pod", "services": "Service", "configmaps": "ConfigMap", "persistentvolumeclaims": "PersistentVolumeClaim"}[path.Base(r.URL.Path)]
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"apiVersion":"v1","kind":%q,"metadata":{"name":"x","namespace":"default","uid":"u1"}}`, kind)
		default:
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
		}
	}))
	t.Cleanup(func() { close(stop); s.Close() })
	f.URL = s.URL
	return f
}

// hangingServer accepts requests and answers none until they are
// cancelled; seen is closed at the first request.
func hangingServer(t *testing.T) (url string, seen <-chan struct{}) {
	t.Helper()
	ch, stop := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(ch) })
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop); s.Close() })
	return s.URL, ch
}

// TestAuditExitCodeRows is the third review's N13, one row each: the
// input, the exit code the README gives it and what stderr names.
func TestAuditExitCodeRows(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", tmp)
	t.Setenv("SPARK_CONF_DIR", "")
	t.Setenv("SPARK_HOME", "")
	t.Setenv("DOCKER_CONFIG", tmp)
	t.Setenv("PREBAKE_REGISTRY_AUTH", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(tmp, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(tmp, "none"))
	const coord = "org.slf4j:slf4j-api:2.0.7"
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	lockFile := filepath.Join(tmp, "prebake.lock")
	if code, _, errs := runPrebake(context.Background(), append(append([]string{"resolve", "-q", "--lock", lockFile}, demo...), coord)...); code != 0 {
		t.Fatalf("resolve for the lock: exit %d\n%s", code, errs)
	}
	lf, err := lock.Read(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(tmp, "truncated.lock")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}

	nativeSubmit := func(master string, extra ...string) []string {
		args := []string{"submit", "--submitter", "native", "--spark-version", "3.5.9", "--", "--master", "k8s://" + master, "--deploy-mode", "cluster",
			"--conf", "spark.kubernetes.authenticate.submission.oauthToken=tok", "--conf", "spark.kubernetes.container.image=apache/spark:3.5.9"}
		return append(append(args, extra...), "--class", "M", "local:///a.jar")
	}

	// A registry whose base manifest is an HTML page, or over 100 MB.
	registry := func(body func(w io.Writer)) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v2/" {
				return
			}
			if !strings.Contains(r.URL.Path, "/manifests/") {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Docker-Content-Digest", "sha256:"+strings.Repeat("ab", 32))
			if r.Method == http.MethodHead {
				w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
				w.Header().Set("Content-Length", "1000")
				return
			}
			w.Header().Set("Content-Type", "text/html")
			body(w)
		}))
		t.Cleanup(s.Close)
		return strings.TrimPrefix(s.URL, "http://")
	}
	html := registry(func(w io.Writer) { io.WriteString(w, "<html><body>Please log in</body></html>") })
	huge := registry(func(w io.Writer) { io.Copy(w, io.LimitReader(zeros{}, 100<<20+1)) })
	bakeImage := func(reg string) []string {
		return append(append([]string{"bake", "image", "--base", reg + "/spark/base:3.5", "--target", "oci:" + filepath.Join(t.TempDir(), "img")}, demo...), coord)
	}

	// A REST master that answers more than 4 MiB, or an HTML page.
	var restRequests atomic.Int32
	rest := func(body string, n int) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			restRequests.Add(1)
			io.WriteString(w, body)
			io.Copy(w, io.LimitReader(zeros{}, int64(n)))
		}))
		t.Cleanup(s.Close)
		return "spark://" + strings.TrimPrefix(s.URL, "http://")
	}
	restBig := rest(`{"action":"SubmissionStatusResponse","message":"`, 4<<20+10)
	restHTML := rest("<html><body>Spark Master at spark://x:7077</body></html>", 0)

	// A store whose set manifest is over 64 MiB (sparse).
	store := filepath.Join(tmp, "store")
	setFile := filepath.Join(store, "sets", lf.Hash()+".json")
	if err := os.MkdirAll(filepath.Dir(setFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(setFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(setFile, 64<<20+1); err != nil {
		t.Fatal(err)
	}
	// The same over S3: the GET of the set manifest streams 64 MiB + 1.
	s3big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/sets/"+lf.Hash()+".json") {
			io.Copy(w, io.LimitReader(zeros{}, 64<<20+1))
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(s3big.Close)

	big := filepath.Join(tmp, "big.conf") // 4.4 MB: the ConfigMap is refused with 413
	if err := os.WriteFile(big, []byte("spark.big="+strings.Repeat("x", 4400000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		// args returns the command; cancel, when set, is closed to cancel
		// the run (as SIGTERM does).
		args func(t *testing.T) (args []string, cancel <-chan struct{})
		want int
		msg  string
		max  time.Duration
		// after checks more.
		after func(t *testing.T, stderr string)
	}{
		{"native namespace ../x", nil, exitcode.Usage, `"../x" is not a valid namespace`, 2 * time.Second, nil},
		{"native namespace a/b", nil, exitcode.Usage, `"a/b" is not a valid namespace`, 2 * time.Second, nil},
		{"native namespace ..", nil, exitcode.Usage, `".." is not a valid namespace`, 2 * time.Second, nil},
		{"native namespace %2e%2e", nil, exitcode.Usage, `"%2e%2e" is not a valid namespace`, 2 * time.Second, nil},
		{"ConfigMap too large (413)", func(t *testing.T) ([]string, <-chan struct{}) {
			return nativeSubmit(newFakeAPIServer(t, false, nil).URL, "--properties-file", big), nil
		}, exitcode.DataErr, big, 30 * time.Second, nil},
		{"SIGTERM during resolve", func(t *testing.T) ([]string, <-chan struct{}) {
			u, seen := hangingServer(t)
			return []string{"resolve", "--no-default-repositories", "--repositories", u + "/maven/", "--cache", t.TempDir(), coord}, seen
		}, exitcode.DriverFailed, "cancelled", 10 * time.Second, nil},
		{"SIGTERM during bake s3", func(t *testing.T) ([]string, <-chan struct{}) {
			u, seen := hangingServer(t)
			return append(append([]string{"bake", "s3", "--lock", lockFile, "--store", "s3://bucket/prefix", "--endpoint", u, "--path-style"}, demo...), coord), seen
		}, exitcode.DriverFailed, "cancelled", 10 * time.Second, nil},
		{"SIGTERM during submit", func(t *testing.T) ([]string, <-chan struct{}) {
			seen := make(chan struct{})
			return nativeSubmit(newFakeAPIServer(t, true, seen).URL), seen
		}, exitcode.DriverFailed, "cancelled", 40 * time.Second, nil},
		{"truncated lock", func(*testing.T) ([]string, <-chan struct{}) {
			return append(append([]string{"resolve", "--lock", truncated}, demo...), coord), nil
		}, exitcode.DataErr, truncated, 2 * time.Second, nil},
		{"truncated lock with --frozen", func(*testing.T) ([]string, <-chan struct{}) {
			return append(append([]string{"resolve", "--frozen", "--lock", truncated}, demo...), coord), nil
		}, exitcode.DataErr, truncated, 2 * time.Second, func(t *testing.T, stderr string) {
			if strings.Contains(stderr, "run without --frozen") {
				t.Errorf("a truncated lock is not stale: stderr %s", stderr)
			}
		}},
		{"registry manifest over 100 MB", func(*testing.T) ([]string, <-chan struct{}) { return bakeImage(huge), nil },
			exitcode.DataErr, "larger than a manifest may be", 60 * time.Second, nil}, // 2.4s; -race reads 100 MB slowly
		{"registry manifest that is HTML", func(*testing.T) ([]string, <-chan struct{}) { return bakeImage(html), nil },
			exitcode.DataErr, "not an image manifest", 10 * time.Second, func(t *testing.T, stderr string) {
				if strings.Contains(stderr, "changed while baking") || !strings.Contains(stderr, "Please log in") {
					t.Errorf("want the bad answer named, not a changed base: %s", stderr)
				}
			}},
		{"REST answer over 4 MiB", func(*testing.T) ([]string, <-chan struct{}) {
			return []string{"status", "driver-1", "--master", restBig}, nil
		}, exitcode.DataErr, "answer larger than 4194304 bytes", 5 * time.Second, nil},
		{"REST master that is an HTML page: asked once", func(*testing.T) ([]string, <-chan struct{}) {
			restRequests.Store(0)
			return []string{"status", "driver-1", "--master", restHTML}, nil
		}, exitcode.Unavailable, "spark.master.rest.enabled", 5 * time.Second, func(t *testing.T, stderr string) {
			if n := restRequests.Load(); n != 1 || strings.Contains(stderr, "retrying") {
				t.Errorf("%d requests, want 1 and no retry:\n%s", n, stderr)
			}
		}},
		{"file:// store set manifest over 64 MiB", func(*testing.T) ([]string, <-chan struct{}) {
			return append(append([]string{"bake", "s3", "--lock", lockFile, "--store", "file://" + store}, demo...), coord), nil
		}, exitcode.DataErr, "answer larger than 67108864 bytes", 5 * time.Second, nil},
		{"S3 set manifest over 64 MiB", func(*testing.T) ([]string, <-chan struct{}) {
			return append(append([]string{"bake", "s3", "--lock", lockFile, "--store", "s3://bucket/prefix", "--endpoint", s3big.URL, "--path-style"}, demo...), coord), nil
		}, exitcode.DataErr, "answer larger than 67108864 bytes", 60 * time.Second, nil}, // 0.7s; -race reads 64 MiB slowly
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			var cancelAt <-chan struct{}
			if tt.args == nil { // a namespace row
				api := newFakeAPIServer(t, false, nil)
				ns := strings.TrimPrefix(tt.name, "native namespace ")
				args = nativeSubmit(api.URL, "--conf", "spark.kubernetes.namespace="+ns)
				defer func() {
					if n := api.requests.Load(); n != 0 {
						t.Errorf("%d requests to the API server, want none", n)
					}
				}()
			} else {
				args, cancelAt = tt.args(t)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if cancelAt != nil {
				go func() {
					select {
					case <-cancelAt:
						time.Sleep(100 * time.Millisecond)
						cancel(errors.New("terminated signal received"))
					case <-ctx.Done():
					}
				}()
			}
			start := time.Now()
			code, stdout, stderr := runPrebake(ctx, args...)
			took := time.Since(start)
			if code != tt.want || !strings.Contains(stderr, tt.msg) {
				t.Fatalf("prebake %s: exit %d, want %d with %q in stderr\nstdout: %.2000s\nstderr: %.2000s", strings.Join(args, " "), code, tt.want, tt.msg, stdout, stderr)
			}
			if took > tt.max {
				t.Errorf("took %s, want at most %s", took, tt.max)
			}
			if tt.after != nil {
				tt.after(t, stderr)
			}
		})
	}
}

// zeros is an endless reader of '0'.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// TestAuditSIGTERM sends a real SIGTERM to a built prebake while resolve
// waits on a repository that never answers: it exits 80 at once, saying it
// was cancelled by the signal (the in-process rows above cancel the
// context instead).
func TestAuditSIGTERM(t *testing.T) {
	bin := testenv.Prebake(t)
	u, seen := hangingServer(t)
	tmp := t.TempDir()
	c := exec.Command(bin, "resolve", "--no-default-repositories", "--repositories", u+"/maven/", "--cache", filepath.Join(tmp, "cache"), "org.slf4j:slf4j-api:2.0.7")
	c.Env = append(os.Environ(), "PREBAKE_CONFIG=", "PREBAKE_CACHE="+filepath.Join(tmp, "cache"), "HOME="+tmp)
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-time.After(30 * time.Second):
		c.Process.Kill()
		t.Fatalf("no request in 30s\n%s", stderr.String())
	}
	start := time.Now()
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.Process.Kill()
		t.Fatalf("still running 10s after SIGTERM\n%s", stderr.String())
	}
	if code := c.ProcessState.ExitCode(); code != exitcode.DriverFailed || !strings.Contains(stderr.String(), "cancelled (terminated signal received)") {
		t.Errorf("exit %d after SIGTERM, want %d saying it was cancelled\n%s", code, exitcode.DriverFailed, stderr.String())
	}
	t.Logf("exit %d %s after SIGTERM", c.ProcessState.ExitCode(), time.Since(start).Round(time.Millisecond))
}
