package bed

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// RegistryServer is a running docker-registry (the CNCF distribution
// registry): plain http on 127.0.0.1, on-disk storage, no auth.
type RegistryServer struct {
	Pid  int    `json:"pid"`
	Host string `json:"host"` // 127.0.0.1:PORT
	Dir  string `json:"dir"`  // config.yml, registry.log, data/ (the storage)
	server
}

// RegistryBinary finds docker-registry ($PREBAKE_DOCKER_REGISTRY, PATH).
func RegistryBinary() (string, error) {
	return testenv.FindBinary("docker-registry", "PREBAKE_DOCKER_REGISTRY")
}

// WriteRegistryConfig writes docker-registry's configuration to
// dir/config.yml and returns its path: serving host (127.0.0.1:PORT, plain
// http), storage in dir/data (deletes allowed, no upload purging),
// warnings only, and extra (YAML, e.g. auth) appended. The one
// configuration of the real registry: the bed's, a test's private one
// (layers/registrytest) and the real node's (internal/testenv/cluster).
func WriteRegistryConfig(dir, host, extra string) (string, error) {
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

// StartRegistryProcess starts docker-registry (bin) serving
// dir/config.yml (WriteRegistryConfig) on host, its output appended to
// logFile, and waits up to 10 s until it answers /v2/; on an error it is
// killed. The one launcher of the real registry process: the bed's, a
// test's private one (and its restart) and the real node's.
func StartRegistryProcess(bin, dir, host, logFile string) (*testenv.Process, error) {
	p, err := startProcess("docker-registry", logFile, nil, bin, "serve", filepath.Join(dir, "config.yml"))
	if err != nil {
		return nil, err
	}
	err = waitReady(p, "serving "+host, 10*time.Second, func() bool {
		resp, err := http.Get("http://" + host + "/v2/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized
	})
	if err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

// LaunchRegistry launches a registry without auth in dir on a free port.
func LaunchRegistry(bin, dir string) (*RegistryServer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ports, err := testenv.FreePorts(1)
	if err != nil {
		return nil, err
	}
	s := &RegistryServer{Host: "127.0.0.1:" + strconv.Itoa(ports[0]), Dir: dir}
	if _, err := WriteRegistryConfig(dir, s.Host, ""); err != nil {
		return nil, err
	}
	p, err := StartRegistryProcess(bin, dir, s.Host, filepath.Join(dir, "registry.log"))
	if err != nil {
		return nil, err
	}
	s.Pid, s.procs = p.Cmd.Process.Pid, []*testenv.Process{p}
	return s, nil
}

var ownRegistry testenv.Shared[*RegistryServer]

// Registry is the run's shared registry for an integration test
// (testenv.RequireIT): the bed's, else one the test binary launches once.
// Tests share it by repository names of their own.
func Registry(t testing.TB) *RegistryServer {
	t.Helper()
	testenv.RequireIT(t)
	b := published().Registry
	ok := b != nil && alive(b.Pid) && answers(b.Host)
	bin := ""
	if !ok {
		bin = testenv.Binary(t, "docker-registry", "PREBAKE_DOCKER_REGISTRY")
	}
	return own(t, "registry", &ownRegistry, b, ok, func(dir string) (*RegistryServer, error) {
		return LaunchRegistry(bin, dir)
	})
}
