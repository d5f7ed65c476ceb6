// Package bed owns the life of the tests' real servers but the node: the
// OCI registry (docker-registry), nginx, versitygw and the Spark standalone
// master and worker (issue 43). It holds the one launcher of each (start,
// readiness, stop, logs), the bed's published state and the attach logic.
//
// `make test` and `make cluster` (hack/cluster serve) launch every server
// once, beside the real node (internal/testenv/cluster), and publish them
// in StateFile; PREBAKE_BED names another file, and PREBAKE_BED= (empty)
// never attaches. A test binary uses a published server whose process is
// alive and whose port answers; otherwise it launches its own, once for
// the binary (testenv.Shared), stopped at its end (testenv.AtExit, and
// with the binary: Pdeathsig). So `go test -run X ./pkg` alone still works.
//
// Tests share a server by a space of their own: a repository prefix on
// the registry (layers/registrytest), a directory served under a path of
// its own on nginx (Nginx.Mount), a bucket on versitygw (s3store/s3test).
// The standalone master and worker are shared as they are.
//
// The package imports no client-go and none of the node's package:
// internal/testenv/cluster, layers/registrytest, s3store/s3test and
// internal/mavenhttp import it, not the other way.
package bed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// StateFile is where a served bed (hack/cluster serve) publishes its
// servers; PREBAKE_BED names another file ("" never attaches).
const StateFile = "/run/prebake-bed.json"

// StatePath is the bed state file the tests attach to ("" when none).
func StatePath() string {
	if p, ok := os.LookupEnv("PREBAKE_BED"); ok {
		return p
	}
	return StateFile
}

// State is what an attaching binary needs of the bed's servers: each is
// nil when the bed does not run it.
type State struct {
	Pid        int               `json:"pid"` // the serving process (hack/cluster serve)
	Registry   *RegistryServer   `json:"registry,omitempty"`
	Nginx      *NginxServer      `json:"nginx,omitempty"`
	S3         *S3Server         `json:"s3,omitempty"`
	Standalone *StandaloneServer `json:"standalone,omitempty"`
}

// Publish writes s to path atomically (a temporary file renamed), 0600.
func Publish(path string, s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.part")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// ErrNoBed: no bed is published at the path (or its process is gone).
var ErrNoBed = errors.New("no running test bed")

// Read returns the state published at path whose serving process is alive.
func Read(path string) (*State, error) {
	if path == "" {
		return nil, ErrNoBed
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoBed
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !alive(s.Pid) {
		return nil, fmt.Errorf("%s: its server (pid %d) is gone: %w", path, s.Pid, ErrNoBed)
	}
	return &s, nil
}

// published is the bed this binary attaches to, read once (an empty state
// when none).
var published = sync.OnceValue(func() *State {
	s, err := Read(StatePath())
	if err != nil {
		return &State{}
	}
	return s
})

// alive reports whether process pid exists.
func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// answers reports whether addr (host:port) accepts a TCP connection.
func answers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Bed is the servers hack/cluster serve launched.
type Bed struct {
	State
	log func(string, ...any)
}

// Options says what Launch starts.
type Options struct {
	// SparkHome, when set, starts the standalone master and worker of
	// that distribution.
	SparkHome string
	// Log gets progress lines.
	Log func(format string, args ...any)
}

// Launch starts, in dir, every server whose binary is installed, in
// parallel; a missing binary leaves its server out (its tests launch
// their own, or skip). On an error it stops what it started.
func Launch(ctx context.Context, dir string, o Options) (*Bed, error) {
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	b := &Bed{State: State{Pid: os.Getpid()}, log: o.Log}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	launch := func(name string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			err := f()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, errNotInstalled):
				o.Log("%s: left out (%v)", name, err)
			case err != nil:
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			default:
				o.Log("%s: up in %s", name, time.Since(start).Round(100*time.Millisecond))
			}
		}()
	}
	launch("registry", func() (err error) {
		bin, err := installed(RegistryBinary())
		if err == nil {
			b.Registry, err = LaunchRegistry(bin, filepath.Join(dir, "registry"))
		}
		return err
	})
	launch("nginx", func() (err error) {
		bin, err := installed(NginxBinary())
		if err == nil {
			b.Nginx, err = LaunchNginx(bin, filepath.Join(dir, "nginx"))
		}
		return err
	})
	launch("versitygw", func() (err error) {
		bin, err := installed(S3Binary())
		if err == nil {
			b.S3, err = LaunchS3(bin, filepath.Join(dir, "versitygw"))
		}
		return err
	})
	if o.SparkHome != "" {
		launch("standalone", func() (err error) {
			b.Standalone, err = LaunchStandalone(o.SparkHome, filepath.Join(dir, "standalone"), false)
			return err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Stop()
		return nil, err
	}
	return b, ctx.Err()
}

// Stop stops every server the bed launched.
func (b *Bed) Stop() {
	if b.Standalone != nil {
		b.Standalone.stop()
	}
	if b.S3 != nil {
		b.S3.stop()
	}
	if b.Nginx != nil {
		b.Nginx.stop()
	}
	if b.Registry != nil {
		b.Registry.stop()
	}
}

// errNotInstalled: a server's binary is missing.
var errNotInstalled = errors.New("not installed")

func installed(bin string, err error) (string, error) {
	if err != nil {
		return "", fmt.Errorf("%w: %v", errNotInstalled, err)
	}
	return bin, nil
}
