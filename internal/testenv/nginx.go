package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nginx is a real nginx serving a directory on 127.0.0.1, with an access
// log, so a test can count the requests a run made.
type Nginx struct {
	URL  string // http://127.0.0.1:PORT/
	log  string
	cmd  *exec.Cmd
	done bool
}

// StartNginx serves dir with nginx (/usr/sbin/nginx or PATH; skips, or
// fails under CI, when it is not installed) until Stop or the test's end.
func StartNginx(t testing.TB, dir string) *Nginx {
	t.Helper()
	RequireIT(t)
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = Binary(t, "/usr/sbin/nginx", "PREBAKE_NGINX")
	}
	port, d := FreePort(t), t.TempDir()
	n := &Nginx{URL: fmt.Sprintf("http://127.0.0.1:%d/", port), log: filepath.Join(d, "access.log")}
	// One process: killing it closes the port (no orphaned worker).
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events {}
http {
  access_log %[1]s/access.log;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  server {
    listen 127.0.0.1:%[2]d;
    root %[3]s;
    autoindex on;
  }
}
`, d, port, dir)
	if err := os.WriteFile(filepath.Join(d, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	n.cmd = exec.Command(bin, "-p", d, "-c", filepath.Join(d, "nginx.conf"))
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	n.cmd.Stderr = &stderr
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("starting nginx: %v", err)
	}
	t.Cleanup(n.Stop)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(30 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not listen on %s: %s", addr, stderr.String())
		}
	}
}

// Requests is the number of requests logged so far (nginx writes each
// line when the response is done).
func (n *Nginx) Requests(t testing.TB) int {
	t.Helper()
	data, err := os.ReadFile(n.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// Stop kills nginx (idempotent): its port is then closed.
func (n *Nginx) Stop() {
	if n.done {
		return
	}
	n.done = true
	_ = n.cmd.Process.Kill()
	_ = n.cmd.Wait()
}
