package mavenhttp

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// Nginx is a real nginx (Debian) serving a Maven repository directory on
// 127.0.0.1: at / openly, and at /private/ behind basic auth. It is the
// one nginx launcher of the tests.
type Nginx struct {
	URL        string // http://127.0.0.1:PORT/ (open)
	PrivateURL string // http://127.0.0.1:PORT/private/ (basic auth), without userinfo; "" without a user
	Dir        string // the server's prefix dir: nginx.conf, logs

	stop func()
}

// StartNginx starts nginx for an integration test (testenv.RequireIT) and
// stops it in t.Cleanup. With user "" there is no /private/ location. It
// skips (fails under CI) when nginx or, with a user, htpasswd
// (apache2-utils) is missing.
func StartNginx(t testing.TB, root, user, pass string) *Nginx {
	t.Helper()
	testenv.RequireIT(t)
	// Debian installs nginx in /usr/sbin, which is not on every user's PATH.
	bin := "/usr/sbin/nginx"
	if os.Getenv("PREBAKE_NGINX") != "" || !fileExists(bin) {
		bin = testenv.Binary(t, "nginx", "PREBAKE_NGINX")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	private := ""
	if user != "" {
		htpasswd := testenv.Binary(t, "htpasswd", "")
		if out, err := exec.Command(htpasswd, "-bc", filepath.Join(dir, "htpasswd"), user, pass).CombinedOutput(); err != nil {
			t.Fatalf("htpasswd: %v: %s", err, out)
		}
		private = fmt.Sprintf(`
    location /private/ {
      alias %[1]s/;
      autoindex on;
      auth_basic "maven";
      auth_basic_user_file %[2]s/htpasswd;
    }`, root, dir)
	}
	port := testenv.FreePort(t)
	// As root, nginx's workers would run as nobody and could not read the
	// test's 0700 temp dirs; run them as the test's user instead.
	userLine := ""
	if os.Geteuid() == 0 {
		userLine = "user root;"
	}
	conf := fmt.Sprintf(userLine+`
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log warn;
events { worker_connections 256; }
http {
  access_log %[1]s/logs/access.log;
  client_body_temp_path %[1]s/tmp/body;
  proxy_temp_path %[1]s/tmp/proxy;
  fastcgi_temp_path %[1]s/tmp/fastcgi;
  uwsgi_temp_path %[1]s/tmp/uwsgi;
  scgi_temp_path %[1]s/tmp/scgi;
  keepalive_requests 10000;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:%[2]d;
    location / { root %[3]s; autoindex on; }%[4]s
  }
}
`, dir, port, root, private)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "logs", "error.log"), "-c", confPath, "-g", "daemon off;")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting nginx: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	n := &Nginx{
		URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/",
		Dir: dir,
		stop: func() {
			once.Do(func() {
				_ = cmd.Process.Signal(syscall.SIGQUIT)
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					<-done
				}
				// No worker outlives the master (a graceful stop leaves none).
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			})
		},
	}
	if user != "" {
		n.PrivateURL = n.URL + "private/"
	}
	t.Cleanup(n.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			if resp, err := http.Get(n.URL); err == nil {
				resp.Body.Close()
				break
			}
		}
		select {
		case err := <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "logs", "error.log"))
			t.Fatalf("nginx exited: %v\n%s", err, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("nginx did not start in 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// Stop stops nginx (idempotent): its port is then closed.
func (n *Nginx) Stop() { n.stop() }

// Requests is the number of requests logged so far (nginx writes each
// line when the response is done).
func (n *Nginx) Requests(t testing.TB) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(n.Dir, "logs", "access.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
