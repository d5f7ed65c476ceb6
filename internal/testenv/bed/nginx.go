package bed

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
)

// NginxServer is a running nginx (Debian) on 127.0.0.1 that serves the
// directories its tests mount (Mount), each under a path of its own.
type NginxServer struct {
	Pid int    `json:"pid"`
	URL string `json:"url"` // http://127.0.0.1:PORT/
	Dir string `json:"dir"` // nginx.conf, www/, htpasswd/, logs/
	server
}

// NginxBinary finds nginx: $PREBAKE_NGINX, /usr/sbin/nginx (Debian's,
// not on every user's PATH), PATH.
func NginxBinary() (string, error) {
	if os.Getenv("PREBAKE_NGINX") == "" {
		if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
			return "/usr/sbin/nginx", nil
		}
	}
	return testenv.FindBinary("nginx", "PREBAKE_NGINX")
}

// nginxConf serves www/ID/ openly at /ID/ and, behind basic auth with the
// users of htpasswd/ID, at /private/ID/; each request's access log line
// goes to logs/ID/access.log (a test's mount links logs/ID to its own
// directory). One process (master_process off): it dies with its
// launcher, which no worker would.
const nginxConf = `daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log warn;
events { worker_connections 1024; }
http {
  map $uri $bed_id {
    "~^/private/(?<bed_private>[A-Za-z0-9-]+)/" $bed_private;
    "~^/(?<bed_open>[A-Za-z0-9-]+)/" $bed_open;
    default none;
  }
  access_log %[1]s/logs/$bed_id/access.log;
  client_body_temp_path %[1]s/tmp/body;
  proxy_temp_path %[1]s/tmp/proxy;
  fastcgi_temp_path %[1]s/tmp/fastcgi;
  uwsgi_temp_path %[1]s/tmp/uwsgi;
  scgi_temp_path %[1]s/tmp/scgi;
  keepalive_requests 10000;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:%[2]d;
    root %[1]s/www;
    location / { autoindex on; }
    location /private/ {
      alias %[1]s/www/;
      autoindex on;
      auth_basic "maven";
      auth_basic_user_file %[1]s/htpasswd/$bed_id;
    }
  }
}
`

// LaunchNginx launches nginx in dir on a free port and waits until it
// answers.
func LaunchNginx(bin, dir string) (*NginxServer, error) {
	for _, d := range []string{"www", "htpasswd", "logs/none", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	ports, err := testenv.FreePorts(1)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(nginxConf, dir, ports[0])), 0o644); err != nil {
		return nil, err
	}
	errLog := filepath.Join(dir, "logs", "error.log")
	p, err := startProcess("nginx", filepath.Join(dir, "nginx.log"), nil, bin, "-p", dir, "-e", errLog, "-c", conf)
	if err != nil {
		return nil, err
	}
	s := &NginxServer{Pid: p.Cmd.Process.Pid, URL: "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/", Dir: dir, server: server{procs: []*testenv.Process{p}}}
	err = waitReady(p, "answering "+s.URL, 10*time.Second, func() bool {
		resp, err := http.Get(s.URL)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	if err != nil {
		p.Kill()
		return nil, fmt.Errorf("%w\n%s", err, testenv.TailFile(errLog, 20))
	}
	return s, nil
}

// stop stops nginx gracefully (SIGQUIT), killed after 5s.
func (s *NginxServer) stop() {
	s.once.Do(func() {
		for _, p := range s.procs {
			p.Stop(syscall.SIGQUIT, 5*time.Second, nil)
		}
	})
}

var ownNginx testenv.Shared[*NginxServer]

// Nginx is the run's shared nginx for an integration test
// (testenv.RequireIT): the bed's, else one the test binary launches once.
func Nginx(t testing.TB) *NginxServer {
	t.Helper()
	testenv.RequireIT(t)
	b := published().Nginx
	ok := b != nil && alive(b.Pid) && answers(b.URL[len("http://"):len(b.URL)-1])
	bin := ""
	if !ok {
		var err error
		if bin, err = NginxBinary(); err != nil {
			testenv.Skip(t, err.Error())
		}
	}
	return own(t, "nginx", &ownNginx, b, ok, func(dir string) (*NginxServer, error) {
		return LaunchNginx(bin, dir)
	})
}

// NginxMount is a test's directory served by a shared nginx.
type NginxMount struct {
	URL        string // http://127.0.0.1:PORT/ID/ (open)
	PrivateURL string // http://127.0.0.1:PORT/private/ID/ (basic auth), without userinfo; "" without a user
	Dir        string // the test's: logs/access.log has its requests' lines

	unmount func()
}

// Mount serves root at URL (and, with user, at PrivateURL behind basic
// auth as user with pass) until t ends or Unmount; the access log lines
// of those requests go to Dir/logs/access.log. With a user it needs
// htpasswd (apache2-utils): it skips (fails under CI) without.
func (s *NginxServer) Mount(t testing.TB, root, user, pass string) *NginxMount {
	t.Helper()
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	id := "t" + hex.EncodeToString(b)
	m := &NginxMount{URL: s.URL + id + "/", Dir: t.TempDir()}
	logs := filepath.Join(m.Dir, "logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logs, "access.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := []string{filepath.Join(s.Dir, "logs", id), filepath.Join(s.Dir, "www", id)}
	m.unmount = func() {
		for _, l := range append(links, filepath.Join(s.Dir, "htpasswd", id)) {
			_ = os.Remove(l)
		}
	}
	t.Cleanup(m.Unmount)
	if user != "" {
		htpasswd := testenv.Binary(t, "htpasswd", "")
		if out, err := exec.Command(htpasswd, "-bc", filepath.Join(s.Dir, "htpasswd", id), user, pass).CombinedOutput(); err != nil {
			t.Fatalf("htpasswd: %v: %s", err, out)
		}
		m.PrivateURL = s.URL + "private/" + id + "/"
	}
	// The log link first: the first request is logged.
	for i, target := range []string{logs, root} {
		if err := os.Symlink(target, links[i]); err != nil {
			t.Fatalf("nginx: mounting %s: %v", root, err)
		}
	}
	return m
}

// Unmount stops serving the test's directory (idempotent): its URLs then
// answer 404.
func (m *NginxMount) Unmount() { m.unmount() }
