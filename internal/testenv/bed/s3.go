package bed

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// Test credentials of versitygw's root user; never real ones.
const (
	S3AccessKey = "prebake-it"
	S3SecretKey = "prebake-it-secret-not-real"
)

// S3Server is a running versitygw (posix backend) on 127.0.0.1.
type S3Server struct {
	Pid      int    `json:"pid"`
	Endpoint string `json:"endpoint"` // http://127.0.0.1:PORT
	Root     string `json:"root"`     // the posix backend's directory: buckets are its subdirectories
	Dir      string `json:"dir"`      // versitygw.log, data/ (Root)
	server
}

// S3Binary finds versitygw ($PREBAKE_VERSITYGW, PATH, the cache).
func S3Binary() (string, error) {
	return testenv.FindBinary("versitygw", "PREBAKE_VERSITYGW", "versitygw-v1.8.0/versitygw")
}

// LaunchS3 launches versitygw in dir on a free port and waits until it
// accepts connections.
func LaunchS3(bin, dir string) (*S3Server, error) {
	root := filepath.Join(dir, "data")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	ports, err := testenv.FreePorts(1)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	p, err := startProcess("versitygw", filepath.Join(dir, "versitygw.log"), nil, bin,
		"--access", S3AccessKey, "--secret", S3SecretKey, "--port", addr, "--quiet", "posix", root)
	if err != nil {
		return nil, err
	}
	if err := waitReady(p, "ready on "+addr, 15*time.Second, func() bool { return answers(addr) }); err != nil {
		p.Kill()
		return nil, err
	}
	return &S3Server{Pid: p.Cmd.Process.Pid, Endpoint: "http://" + addr, Root: root, Dir: dir, server: server{procs: []*testenv.Process{p}}}, nil
}

var ownS3 testenv.Shared[*S3Server]

// S3 is the run's shared versitygw for an integration test
// (testenv.RequireIT): the bed's, else one the test binary launches once.
// Tests share it by buckets of their own.
func S3(t testing.TB) *S3Server {
	t.Helper()
	testenv.RequireIT(t)
	b := published().S3
	ok := b != nil && alive(b.Pid) && answers(b.Endpoint[len("http://"):])
	bin := ""
	if !ok {
		bin = testenv.Binary(t, "versitygw", "PREBAKE_VERSITYGW", "versitygw-v1.8.0/versitygw")
	}
	return own(t, "versitygw", &ownS3, b, ok, func(dir string) (*S3Server, error) {
		return LaunchS3(bin, dir)
	})
}
