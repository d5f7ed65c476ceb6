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
	// StandaloneStarting: the standalone master and worker are starting
	// in the background; Standalone waits for them.
	StandaloneStarting bool `json:"standaloneStarting,omitempty"`
}

// Publish writes v (a published state: the bed's, or the node's) to path
// as JSON, atomically (a temporary file renamed), 0600.
func Publish(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
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
	return ReadState(path, func(s *State) int { return s.Pid })
}

// ReadState reads the state published at path (Publish) whose serving
// process, pid of it, is alive: ErrNoBed when none is published or that
// process is gone.
func ReadState[T any](path string, pid func(*T) int) (*T, error) {
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
	var s T
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !alive(pid(&s)) {
		return nil, fmt.Errorf("%s: its server (pid %d) is gone: %w", path, pid(&s), ErrNoBed)
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
	mu      sync.Mutex
	state   State
	path    string // where Publish wrote the state
	stopped bool
	saDone  chan struct{} // closed when the standalone launch has ended
	dir     string
	log     func(string, ...any)
}

// Options says how Launch starts.
type Options struct {
	// Log gets progress lines.
	Log func(format string, args ...any)
}

// Launch starts, in dir, every server whose binary is installed but the
// standalone master and worker (StartStandalone), in parallel, and
// returns when they answer; a missing binary leaves its server out (its
// tests launch their own, or skip). On an error it stops what it started.
func Launch(ctx context.Context, dir string, o Options) (*Bed, error) {
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	b := &Bed{state: State{Pid: os.Getpid()}, dir: dir, log: o.Log}
	var wg sync.WaitGroup
	var errs []error
	launch := func(name string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			err := f()
			b.mu.Lock()
			defer b.mu.Unlock()
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
	var reg *RegistryServer
	var ng *NginxServer
	var s3 *S3Server
	launch("registry", func() (err error) {
		bin, err := installed(RegistryBinary())
		if err == nil {
			reg, err = LaunchRegistry(bin, filepath.Join(dir, "registry"))
		}
		return err
	})
	launch("nginx", func() (err error) {
		bin, err := installed(NginxBinary())
		if err == nil {
			ng, err = LaunchNginx(bin, filepath.Join(dir, "nginx"))
		}
		return err
	})
	launch("versitygw", func() (err error) {
		bin, err := installed(S3Binary())
		if err == nil {
			s3, err = LaunchS3(bin, filepath.Join(dir, "versitygw"))
		}
		return err
	})
	wg.Wait()
	b.mu.Lock()
	b.state.Registry, b.state.Nginx, b.state.S3 = reg, ng, s3
	b.mu.Unlock()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		b.Stop()
		return nil, err
	}
	return b, nil
}

// StartStandalone starts the standalone master and worker of sparkHome
// in the background (their JVMs take 10–25 s of both cores; started with
// the node they slowed its start by about 10 s, so the bed starts them
// once it is up). Until they are up the state says StandaloneStarting
// (Standalone waits); then the bed publishes again.
func (b *Bed) StartStandalone(sparkHome string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped || b.saDone != nil {
		return errors.New("bed: stopped, or the standalone started already")
	}
	b.state.StandaloneStarting = true
	b.saDone = make(chan struct{})
	if b.path != "" {
		if err := Publish(b.path, &b.state); err != nil {
			return err
		}
	}
	go func() {
		defer close(b.saDone)
		start := time.Now()
		sa, err := LaunchStandalone(sparkHome, filepath.Join(b.dir, "standalone"), false)
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.stopped {
			if sa != nil {
				sa.stop()
			}
			return
		}
		b.state.StandaloneStarting = false
		if err != nil {
			b.log("standalone: not started, test binaries launch their own: %v", err)
		} else {
			b.state.Standalone = sa
			b.log("standalone: up in %s", time.Since(start).Round(100*time.Millisecond))
		}
		if b.path != "" {
			if err := Publish(b.path, &b.state); err != nil {
				b.log("standalone: publishing: %v", err)
			}
		}
	}()
	return nil
}

// State is a copy of the bed's state now.
func (b *Bed) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// Publish writes the bed's state to path (Publish) now and whenever it
// changes; Stop removes it.
func (b *Bed) Publish(path string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.path = path
	return Publish(path, &b.state)
}

// Stop removes the published state and stops every server the bed
// launched (a standalone launch under way ends first).
func (b *Bed) Stop() {
	b.mu.Lock()
	b.stopped = true
	if b.path != "" {
		_ = os.Remove(b.path)
	}
	st := b.state
	b.mu.Unlock()
	if b.saDone != nil {
		<-b.saDone
	}
	if st.Standalone != nil {
		st.Standalone.stop()
	}
	if st.S3 != nil {
		st.S3.stop()
	}
	if st.Nginx != nil {
		st.Nginx.stop()
	}
	if st.Registry != nil {
		st.Registry.stop()
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
