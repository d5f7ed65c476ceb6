package bed

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestNginxMounts: two tests' directories on one nginx are served apart,
// each request logged in its own test's log only; the private path asks
// for the mount's user; an unmounted directory answers 404.
func TestNginxMounts(t *testing.T) {
	n := Nginx(t)
	get := func(url, user, pass string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	dirs := [2]string{t.TempDir(), t.TempDir()}
	var mounts [2]*NginxMount
	for i, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "f.txt"), []byte("content "+string(rune('a'+i))), 0o644); err != nil {
			t.Fatal(err)
		}
		mounts[i] = n.Mount(t, d, "", "")
	}
	priv := n.Mount(t, dirs[0], "u", "p")
	for i, m := range mounts {
		if code, body := get(m.URL+"f.txt", "", ""); code != 200 || body != "content "+string(rune('a'+i)) {
			t.Errorf("mount %d: %d %q", i, code, body)
		}
	}
	get(mounts[0].URL+"f.txt", "", "")
	if code, _ := get(priv.PrivateURL+"f.txt", "", ""); code != http.StatusUnauthorized {
		t.Errorf("private without a user: %d, want 401", code)
	}
	if code, _ := get(priv.PrivateURL+"f.txt", "u", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("private with a wrong password: %d, want 401", code)
	}
	if code, body := get(priv.PrivateURL+"f.txt", "u", "p"); code != 200 || body != "content a" {
		t.Errorf("private: %d %q", code, body)
	}
	if code, _ := get(strings.Replace(priv.PrivateURL, "/private/", "/private/"+"x", 1)+"f.txt", "u", "p"); code == 200 {
		t.Errorf("another id's private path answered 200")
	}
	lines := func(m *NginxMount) int {
		b, err := os.ReadFile(filepath.Join(m.Dir, "logs", "access.log"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	if a, b, p := lines(mounts[0]), lines(mounts[1]), lines(priv); a != 2 || b != 1 || p != 3 {
		t.Errorf("log lines %d, %d, %d; want 2, 1, 3", a, b, p)
	}
	mounts[1].Unmount()
	if code, _ := get(mounts[1].URL+"f.txt", "", ""); code != http.StatusNotFound {
		t.Errorf("after Unmount: %d, want 404", code)
	}
}
