package k8s

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit"
)

// unauthorizedAPI is an API server that answers every request 401, its
// message quoting the Authorization header it got (as fakek8s.py does in
// audit 3); it records the headers.
func unauthorizedAPI(t *testing.T) (url string, auth func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized: token %s","reason":"Unauthorized","code":401}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(s.Close)
	return s.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string{}, got...) }
}

func attachOnce(t *testing.T, master string, conf []string, env map[string]string) (string, error) {
	t.Helper()
	args := []string{"--master", "k8s://" + master, "--deploy-mode", "cluster"}
	for _, c := range conf {
		args = append(args, "--conf", c)
	}
	sub, err := submit.LoadSubmission(append(args, "local:///opt/app.jar"), testenv.Environ(env))
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = attachWith(ctx, "default:drv", sub, WithStderr(&stderr), WithPollInterval(10*time.Millisecond),
		WithEnviron(mapEnv(env)), WithInClusterDir(t.TempDir()))
	return stderr.String(), err
}

// TestAuthRetryLinesRedacted is audit 3 N11: the 401 retry lines quote the
// token the server echoed; they are redacted like the final line, and a
// token of letters only is masked too (by value: prebake knows it).
func TestAuthRetryLinesRedacted(t *testing.T) {
	for _, tok := range []string{"K8STOKENsecret99", "abcdefghijklmnopqrstuvwxyz"} {
		t.Run(tok, func(t *testing.T) {
			api, auth := unauthorizedAPI(t)
			stderr, err := attachOnce(t, api, []string{confOAuthToken + "=" + tok}, nil)
			if errdefs.KindOf(err) != errdefs.Denied {
				t.Fatalf("kind %v, want %v: %v", errdefs.KindOf(err), errdefs.Denied, err)
			}
			if n := strings.Count(stderr, "re-reading credentials"); n != authRetries {
				t.Errorf("%d retry lines, want %d:\n%s", n, authRetries, stderr)
			}
			if strings.Contains(stderr, tok) || strings.Contains(redact.Line(err.Error()), tok) { // the error as cmd prints it
				t.Errorf("the token is printed:\n%s\nerror: %v", stderr, redact.Line(err.Error()))
			}
			if !strings.Contains(stderr, "Unauthorized: token Bearer xxxxx") {
				t.Errorf("retry lines lost the server's message:\n%s", stderr)
			}
			if got := auth(); len(got) != authRetries+1 || got[0] != "Bearer "+tok {
				t.Errorf("the server got %d requests, first with %q", len(got), got[0])
			}
			// N12: the explicit token does go over http; prebake says so.
			if !strings.Contains(stderr, "prebake: warning: the submission's token ("+confOAuthToken+" (value not shown)) is sent to "+api+" in clear text") {
				t.Errorf("no clear-text warning:\n%s", stderr)
			}
		})
	}
}

// TestKubeconfigOverHTTP is audit 3 N12: kubeconfig credentials are not
// sent to an http:// API server (client-go sends a kubeconfig user's only
// over TLS, and prebake drops them when only the master is http://). The
// 401 is then reported as that, at once, not as refused credentials after
// retries.
func TestKubeconfigOverHTTP(t *testing.T) {
	for _, tc := range []struct{ name, server string }{
		{"kubeconfig server http", ""},
		{"kubeconfig server https, master http", "https://api.example.invalid:6443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, auth := unauthorizedAPI(t)
			server := tc.server
			if server == "" {
				server = api
			}
			dir := t.TempDir()
			kc := filepath.Join(dir, "kubeconfig")
			testenv.WriteFile(t, filepath.Join(dir, "tok"), "KUBECONFIGTOKEN123\n")
			testenv.WriteFile(t, kc, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+server+`"}}]
users: [{name: u, user: {tokenFile: "`+filepath.Join(dir, "tok")+`", username: "", password: ""}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`)
			env := map[string]string{"KUBECONFIG": kc}
			stderr, err := attachOnce(t, api, []string{confContext + "=ctx"}, env)
			if errdefs.KindOf(err) != errdefs.Denied {
				t.Fatalf("kind %v, want %v: %v", errdefs.KindOf(err), errdefs.Denied, err)
			}
			want := "no credentials were sent: " + api + " is plain http, and the credentials of kubeconfig " + kc + " context ctx are sent only to an https:// API server"
			if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "times in a row") {
				t.Errorf("error %q\nwant it to hold %q", err, want)
			}
			if strings.Contains(stderr, "re-reading credentials") || strings.Contains(stderr, "clear text") {
				t.Errorf("retried or warned:\n%s", stderr)
			}
			if got := auth(); len(got) != 1 || got[0] != "" {
				t.Errorf("the server got %q, want one request without credentials", got)
			}
			// status and kill say the same.
			_, err = statusWith(context.Background(), "k8s://"+api, "default:drv", WithEnviron(mapEnv(env)),
				WithConf(map[string]string{confContext: "ctx"}), WithInClusterDir(t.TempDir()), WithStderr(io.Discard))
			if errdefs.KindOf(err) != errdefs.Denied || !strings.Contains(err.Error(), want) {
				t.Errorf("status: kind %v: %v", errdefs.KindOf(err), err)
			}
		})
	}
}

// TestHugeAPIServerMessageBounded: an API server's 401 with a 5 MB message
// (audit 3 N11 bounds server messages) prints a bounded error and retry lines.
func TestHugeAPIServerMessageBounded(t *testing.T) {
	big := strings.Repeat("x", 5_000_000)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized: %s","reason":"Unauthorized","code":401}`, big)
	}))
	defer s.Close()
	stderr, err := attachOnce(t, s.URL, []string{confOAuthToken + "=K8STOKENsecret99"}, nil)
	if errdefs.KindOf(err) != errdefs.Denied {
		t.Fatalf("kind %v, want %v: %v", errdefs.KindOf(err), errdefs.Denied, err)
	}
	if len(err.Error()) > 2048 || len(stderr) > 8192 {
		t.Errorf("error %d bytes, stderr %d bytes: want them bounded", len(err.Error()), len(stderr))
	}
}
