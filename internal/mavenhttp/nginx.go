package mavenhttp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv/bed"
)

// Nginx is a real nginx (Debian) serving a Maven repository directory on
// 127.0.0.1 for one test: at URL openly, and at PrivateURL behind basic
// auth. The nginx is the run's shared one (the test bed's,
// internal/testenv/bed), which serves each test's directory under a path
// of its own.
type Nginx struct {
	URL        string // http://127.0.0.1:PORT/ID/ (open)
	PrivateURL string // http://127.0.0.1:PORT/private/ID/ (basic auth), without userinfo; "" without a user
	Dir        string // the test's: logs/access.log holds its requests' lines

	mount *bed.NginxMount
}

// StartNginx serves root for an integration test (testenv.RequireIT)
// until t ends. With user "" there is no private URL. It skips (fails
// under CI) when nginx or, with a user, htpasswd (apache2-utils) is
// missing.
func StartNginx(t testing.TB, root, user, pass string) *Nginx {
	t.Helper()
	m := bed.Nginx(t).Mount(t, root, user, pass)
	return &Nginx{URL: m.URL, PrivateURL: m.PrivateURL, Dir: m.Dir, mount: m}
}

// Stop stops serving the test's directory (idempotent): its URLs then
// answer 404 (the shared nginx goes on).
func (n *Nginx) Stop() { n.mount.Unmount() }

// Requests is the number of this test's requests logged so far (nginx
// writes each line when the response is done).
func (n *Nginx) Requests(t testing.TB) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(n.Dir, "logs", "access.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}
