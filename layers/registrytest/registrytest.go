// Package registrytest starts the OCI registries of the tests, one way
// each: InProcess is go-containerregistry's in-memory registry (unit tests:
// no auth, one global blob store), Start the real CNCF distribution
// registry (Debian docker-registry; integration tests: on-disk storage,
// htpasswd basic auth, cross-repository mounts).
package registrytest

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/prebake/prebake/internal/testenv"
)

// Handler is go-containerregistry's in-memory registry, silent, for a test
// that wraps it in a handler of its own (faults, counters).
func Handler() http.Handler { return registry.New(registry.Logger(log.New(io.Discard, "", 0))) }

// InProcess serves Handler on 127.0.0.1 until the test ends and returns
// its host:port, for image references.
func InProcess(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(Handler())
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// User is the user of a registry started WithPassword.
const User = "prebake"

// Registry is a real distribution registry on 127.0.0.1, started for one
// test and stopped at its end.
type Registry struct {
	Host string // 127.0.0.1:PORT
	Dir  string // config.yml, registry.log, data/ (the storage)

	t       testing.TB
	bin     string
	proc    *Process
	stopped bool
}

// Option configures Start.
type Option func(*options)

type options struct{ pass string }

// WithPassword requires htpasswd basic auth as User with pass.
func WithPassword(pass string) Option { return func(o *options) { o.pass = pass } }

// Start starts docker-registry for an integration test (testenv.RequireIT)
// and stops it in t.Cleanup. It skips (fails under CI) when docker-registry
// or, with a password, htpasswd (apache2-utils) is missing.
func Start(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	testenv.RequireIT(t)
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	r := &Registry{t: t, bin: testenv.Binary(t, "docker-registry", "PREBAKE_DOCKER_REGISTRY"), Dir: t.TempDir()}
	r.Host = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	var auth string
	if o.pass != "" {
		htpasswd := testenv.Binary(t, "htpasswd", "")
		out, err := exec.Command(htpasswd, "-Bbn", User, o.pass).Output()
		if err != nil {
			t.Fatalf("htpasswd: %v", err)
		}
		if err := os.WriteFile(filepath.Join(r.Dir, "htpasswd"), out, 0o600); err != nil {
			t.Fatal(err)
		}
		auth = fmt.Sprintf("auth: {htpasswd: {realm: prebake-test, path: %s/htpasswd}}\n", r.Dir)
	}
	if _, err := WriteConfig(r.Dir, r.Host, auth); err != nil {
		t.Fatal(err)
	}
	r.Restart()
	t.Cleanup(r.Stop)
	return r
}

// WriteConfig writes docker-registry's configuration to dir/config.yml and
// returns its path: serving host (127.0.0.1:PORT, plain http), storage in
// dir/data (deletes allowed, no upload purging), warnings only, and extra
// (YAML, e.g. auth) appended. The one configuration of the real registry:
// Start's, and the real node's (internal/testenv/cluster).
func WriteConfig(dir, host, extra string) (string, error) {
	cfg := fmt.Sprintf(`version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: %s/data}
  delete: {enabled: true}
  maintenance: {uploadpurging: {enabled: false}}
http:
  addr: %s
  secret: ci-only-not-secret
`, dir, host) + extra
	path := filepath.Join(dir, "config.yml")
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

// Restart starts the registry again after Stop, on the same port and
// storage, and waits until it answers.
func (r *Registry) Restart() {
	r.t.Helper()
	p, err := Launch(r.bin, r.Dir, r.Host, filepath.Join(r.Dir, "registry.log"))
	if err != nil {
		r.t.Fatal(err)
	}
	r.proc, r.stopped = p, false
}

// Process is a running docker-registry (Launch).
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}
}

// Done is closed when the registry has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill kills the registry and waits for its end: its port is then closed.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// Launch starts docker-registry (bin) serving dir/config.yml (WriteConfig)
// on host, its output appended to logFile, and waits up to 10 s until it
// answers /v2/; on an error it is killed. The one launcher of the real
// registry: Start's (and Restart's), and the real node's
// (internal/testenv/cluster). The registry is killed with the process that
// launched it, and has its own process group (a Ctrl-C of `make cluster`
// reaches the launcher only, which stops the servers in order).
func Launch(bin, dir, host, logFile string) (*Process, error) {
	logf, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "serve", filepath.Join(dir, "config.yml"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting docker-registry: %w", err)
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-p.done:
			data, _ := os.ReadFile(logFile)
			return nil, fmt.Errorf("docker-registry exited before serving %s: %s", host, data)
		default:
		}
		resp, err := http.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return p, nil
			}
		}
	}
	p.Kill()
	data, _ := os.ReadFile(logFile)
	return nil, fmt.Errorf("docker-registry did not start on %s: %s", host, data)
}

// Stop kills the registry (idempotent): its port is then closed.
func (r *Registry) Stop() {
	if r.proc == nil || r.stopped {
		return
	}
	r.stopped = true
	r.proc.Kill()
}

// PushIndex pushes the image index tagged tag
// (org.opencontainers.image.ref.name) in the OCI layout at dir to ref, on a
// registry that takes it without credentials.
func PushIndex(t testing.TB, dir, tag, ref string) {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] == tag {
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.WriteIndex(r, child); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s has no %s", dir, tag)
}
