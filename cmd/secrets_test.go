package cmd

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/mavenhttp"
)

// The credential leaks of the security review (findings 7 and 10) and the
// exit codes of its §9 that are this command line's: each case prints no
// secret anywhere and exits with the README's code.
func TestSecretsInOutsideText(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("KUBECONFIG", filepath.Join(tmp, "none"))
	repo := mavenhttp.New(filepath.Join(root, "testdata", "demo-repo"))
	defer repo.Close()
	host := strings.TrimSuffix(strings.TrimPrefix(repo.URL(), "http://"), "/")
	// An API server whose 401 message quotes the bearer token it was sent.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized: token `+r.Header.Get("Authorization")+`","reason":"Unauthorized","code":401}`)
	}))
	defer api.Close()
	lettersToken := filepath.Join(tmp, "letters-token")
	if err := os.WriteFile(lettersToken, []byte("abcdefghijklmnopqrstuvwxyz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	resolve := func(repoURL string) []string {
		return []string{"resolve", "--no-default-repositories", "--repositories", repoURL, "org.slf4j:slf4j-api:2.0.7"}
	}
	tests := []struct {
		name    string
		args    []string
		want    int
		msg     string   // in stderr
		secrets []string // nowhere in stdout or stderr
		check   func(t *testing.T, stdout string)
	}{
		{"usage: / in the password", resolve("http://alice:pa/ss@" + host + "/"), exitcode.Usage, "percent-encode", []string{"pa/ss", "alice:pa", `":pa"`}, nil},
		{"usage: space in the password", resolve("http://alice:pa ss@" + host + "/"), exitcode.Usage, "percent-encode", []string{"pa ss", "alice:pa"}, nil},
		{"usage: invalid port, at once", resolve("http://u:PW0RD@127.0.0.1:99999/"), exitcode.Usage, "port 99999", []string{"PW0RD"}, nil},
		{"--conf oauthToken without =", []string{"status", "default:spark-*", "--master", "k8s://" + api.URL,
			"--conf", "spark.kubernetes.authenticate.submission.oauthTokenK8STOKENsecret"}, exitcode.Usage, "oauthTokenxxxxx", []string{"K8STOKENsecret"}, nil},
		{"API server message quoting the token", []string{"status", "default:spark-*", "--master", "k8s://" + api.URL,
			"--conf", "spark.kubernetes.authenticate.submission.oauthToken=K8STOKENsecret"}, exitcode.NoPerm, "Unauthorized", []string{"K8STOKENsecret"}, nil},
		{"API server quoting a letters-only token from a token file (audit 3 N11)", []string{"status", "default:spark-*", "--master", "k8s://" + api.URL,
			"--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile=" + lettersToken}, exitcode.NoPerm, "Bearer xxxxx", []string{"abcdefghijklmnopqrstuvwxyz"}, nil},
		{"API server quoting a letters-only token given inline (audit 3 N11)", []string{"status", "default:spark-*", "--master", "k8s://" + api.URL,
			"--conf", "spark.kubernetes.authenticate.submission.oauthToken=onlyletterstokenvalue"}, exitcode.NoPerm, "Bearer xxxxx", []string{"onlyletterstokenvalue"}, nil},
		{"rewrite -o json changes[].old, @ in the password", []string{"rewrite", "-o", "json", "--cache", filepath.Join(tmp, "c2"), "--no-default-repositories", "--",
			"--master", "local[1]", "--packages", "org.slf4j:slf4j-api:2.0.7",
			"--repositories", "http://alice:s3cr3tPW@" + host + "/,http://bob:p@ss@" + host + "/", "app.jar"}, 0, "", []string{"s3cr3tPW", "p@ss", "ss@", "alice", "bob"},
			func(t *testing.T, stdout string) {
				var out struct {
					Changes []struct{ Target, Old string }
				}
				if err := json.Unmarshal([]byte(stdout), &out); err != nil {
					t.Fatalf("%v\n%s", err, stdout)
				}
				for _, c := range out.Changes {
					if c.Target == "--repositories" {
						if want := repo.URL() + "," + repo.URL(); c.Old != want {
							t.Errorf("changes[].old = %q, want %q", c.Old, want)
						}
						return
					}
				}
				t.Errorf("no --repositories change:\n%s", stdout)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			code, stdout, stderr := runPrebake(ctx, tc.args...)
			if code != tc.want || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d, want %d with %q in stderr\nstderr: %s", code, tc.want, tc.msg, stderr)
			}
			if tc.want == exitcode.Usage && time.Since(start) > 5*time.Second {
				t.Errorf("a usage error took %s (retried?)", time.Since(start))
			}
			for _, s := range tc.secrets {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("%q printed\nstdout: %s\nstderr: %s", s, stdout, stderr)
				}
			}
			if tc.check != nil {
				tc.check(t, stdout)
			}
		})
	}
}
