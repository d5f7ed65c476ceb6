package cmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInitWritesNoSecret reproduces HIGH 3 of review 4: init wrote the
// repository password (from $PREBAKE_REPOSITORIES or --repositories) and
// the developer's own cache directory ($PREBAKE_CACHE) into the
// prebake.yaml the CI guide commits. Neither is in the file now, init
// names what it left out (the names, never the values), and the lock
// written with the file stays fresh for it.
func TestInitWritesNoSecret(t *testing.T) {
	root, tmp := isolatedCLI(t)
	const user, pass = "deploy", "s3cr3tpass"
	repo := http.FileServer(http.Dir(filepath.Join(root, "testdata", "demo-repo")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		repo.ServeHTTP(w, r)
	}))
	defer srv.Close()
	withCreds := strings.Replace(srv.URL, "://", "://"+user+":"+pass+"@", 1) + "/"
	argv := []string{"--", "--master", "local[2]", "--packages", "org.slf4j:slf4j-api:2.0.7", "app.py"}
	for _, tt := range []struct {
		name  string
		env   map[string]string
		flags []string
		want  string   // the file's settings
		said  []string // in stderr
	}{
		{"from the environment", map[string]string{"PREBAKE_REPOSITORIES": withCreds, "PREBAKE_NO_DEFAULT_REPOSITORIES": "true", "PREBAKE_CACHE": filepath.Join(tmp, "c")}, nil,
			"", []string{"repositories (from $PREBAKE_REPOSITORIES", "cache (from $PREBAKE_CACHE", "noDefaultRepositories (from $PREBAKE_NO_DEFAULT_REPOSITORIES"}},
		{"from the flags", nil, []string{"--no-default-repositories", "--repositories", withCreds, "--cache", filepath.Join(tmp, "c")},
			"repositories:\n    - " + srv.URL + "/\nnoDefaultRepositories: true\n", []string{"cache (this machine's", "the credentials of 1 URL(s) of repositories"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, _, errs := runPrebake(context.Background(), append(append([]string{"init"}, tt.flags...), argv...)...)
			if code != 0 {
				t.Fatalf("init: exit %d\n%s", code, errs)
			}
			yml, err := os.ReadFile("prebake.yaml")
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{pass, user + ":", tmp} {
				if strings.Contains(string(yml), bad) {
					t.Errorf("prebake.yaml holds %q:\n%s", bad, yml)
				}
				if bad != tmp && strings.Contains(errs, bad) {
					t.Errorf("init's output holds %q:\n%s", bad, errs)
				}
			}
			for _, want := range tt.said {
				if !strings.Contains(errs, want) {
					t.Errorf("init does not say %q:\n%s", want, errs)
				}
			}
			body := strings.TrimPrefix(string(yml), "# written by prebake init; flags and PREBAKE_* variables override it\n")
			if diff := cmp.Diff(tt.want, body); diff != "" {
				t.Errorf("prebake.yaml (-want +got):\n%s", diff)
			}
			if tt.flags != nil {
				// The lock records the repository without userinfo too:
				// with the credentials where the job runs, it is fresh.
				t.Setenv("PREBAKE_REPOSITORIES", withCreds)
				if code, _, errs := runPrebake(context.Background(), "resolve", "-q", "--lock", "prebake.lock", "--frozen", "--cache", filepath.Join(tmp, "c2"), "org.slf4j:slf4j-api:2.0.7"); code != 0 {
					t.Errorf("resolve --frozen with the written file: exit %d\n%s", code, errs)
				}
			}
		})
	}
}

// TestCommittable: the values init may write for every machine.
func TestCommittable(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"HOME": "/home/dev"}[k] }
	repos, _ := settingByKey("repositories")
	keyring, _ := settingByKey("keyring")
	for _, tt := range []struct {
		s    setting
		in   string
		want string
		ok   bool
	}{
		{repos, "https://repo.example/maven2/", "https://repo.example/maven2/", true},
		{repos, "https://u:p4ss@repo.example/maven2/", "https://repo.example/maven2/", true},
		{repos, "https://repo.example/maven2/?token=abcdef123456", "", false},
		{repos, "https://bucket.s3.amazonaws.com/r/?X-Amz-Signature=abc&X-Amz-Credential=x", "", false},
		{keyring, "/home/dev/.config/prebake/keys.asc", "~/.config/prebake/keys.asc", true},
		{keyring, "/etc/prebake/keys.asc", "/etc/prebake/keys.asc", true},
		{keyring, "keys/team.asc", "keys/team.asc", true},
	} {
		got, ok := committable(tt.s, tt.in, getenv)
		if got != tt.want || ok != tt.ok {
			t.Errorf("committable(%s, %q) = %q, %v; want %q, %v", tt.s.key, tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
