// Package registrytest gives the tests their OCI registries, one way
// each: InProcess is go-containerregistry's in-memory registry (unit tests:
// no auth, one global blob store), Start the real CNCF distribution
// registry (Debian docker-registry; integration tests: on-disk storage,
// htpasswd basic auth, cross-repository mounts), launched by the test bed
// (internal/testenv/bed).
package registrytest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/internal/testenv/bed"
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

// Registry is a real distribution registry on 127.0.0.1 for one test: the
// run's shared one (the test bed's, internal/testenv/bed), where the test
// names its repositories under a prefix of its own (Repo), or a private
// one (WithPassword, Private) started for the test and stopped at its end.
type Registry struct {
	Host string // 127.0.0.1:PORT
	Dir  string // config.yml, registry.log, data/ (the storage)

	prefix  string
	t       testing.TB
	bin     string
	proc    *testenv.Process
	shared  bool
	stopped bool
}

// Option configures Start.
type Option func(*options)

type options struct {
	pass    string
	private bool
}

// WithPassword requires htpasswd basic auth as User with pass: a private
// registry.
func WithPassword(pass string) Option { return func(o *options) { o.pass = pass } }

// Private starts a registry of the test's own (one it stops, restarts or
// that must be another host than the shared one's).
func Private() Option { return func(o *options) { o.private = true } }

// Start returns the registry of an integration test (testenv.RequireIT):
// the run's shared one, or with WithPassword or Private a private one
// started now and stopped in t.Cleanup. It skips (fails under CI) when
// docker-registry or, with a password, htpasswd (apache2-utils) is
// missing.
func Start(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	testenv.RequireIT(t)
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	r := &Registry{t: t, prefix: "t" + hex.EncodeToString(b)}
	if o.pass == "" && !o.private {
		s := bed.Registry(t)
		r.Host, r.Dir, r.shared = s.Host, s.Dir, true
		return r
	}
	r.bin, r.Dir = testenv.Binary(t, "docker-registry", "PREBAKE_DOCKER_REGISTRY"), t.TempDir()
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
	if _, err := bed.WriteRegistryConfig(r.Dir, r.Host, auth); err != nil {
		t.Fatal(err)
	}
	r.Restart()
	bed.Used(t, "registry", "private")
	t.Cleanup(r.Stop)
	return r
}

// Repo is the repository name under the test's own prefix, as an image
// reference's repository: HOST/PREFIX/name (HOST/PREFIX when name is "").
// Tests that share a registry never write the same repository.
func (r *Registry) Repo(name string) string {
	if name == "" {
		return r.Host + "/" + r.prefix
	}
	return r.Host + "/" + r.prefix + "/" + name
}

// Restart starts a private registry again after Stop, on the same port and
// storage, and waits until it answers.
func (r *Registry) Restart() {
	r.t.Helper()
	if r.shared {
		r.t.Fatal("registrytest: Restart of the shared registry; start it with Private()")
	}
	p, err := bed.StartRegistryProcess(r.bin, r.Dir, r.Host, filepath.Join(r.Dir, "registry.log"))
	if err != nil {
		r.t.Fatal(err)
	}
	r.proc, r.stopped = p, false
}

// Stop kills a private registry (idempotent): its port is then closed.
// The shared one it leaves running.
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
