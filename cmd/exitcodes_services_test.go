package cmd

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/layers/registrytest"
	"github.com/prebake/prebake/s3store/s3test"
)

// TestBadOutputEveryCommand: every command takes -o and rejects a value it
// does not know with exit 64, naming the value. A new command must be added
// to args here.
func TestBadOutputEveryCommand(t *testing.T) {
	t.Setenv("PREBAKE_CONFIG", "")
	args := map[string][]string{
		"resolve":        {"org.slf4j:slf4j-api:2.0.7"},
		"rewrite":        {"--", "--master", "local", "app.jar"},
		"bake image":     {"--lock", "prebake.lock", "--base", "oci:x", "--target", "oci:y"},
		"bake s3":        {"--lock", "prebake.lock", "--store", "file:///nonexistent"},
		"inspect":        {"oci:x"},
		"warm":           {"-f", "sets.yaml", "--store", "file:///nonexistent"},
		"gc":             {"--store", "file:///nonexistent", "--older-than", "30d"},
		"cache prune":    {"--older-than", "30d", "--cache", "/nonexistent"},
		"submit":         {"--", "--master", "spark://127.0.0.1:1", "--deploy-mode", "cluster", "app.jar"},
		"status":         {"driver-1", "--master", "spark://127.0.0.1:1"},
		"kill":           {"driver-1", "--master", "spark://127.0.0.1:1"},
		"lock diff":      {"a.lock", "b.lock"},
		"sbom":           {"--lock", "prebake.lock"},
		"bundle export":  {"--lock", "prebake.lock", "--to", "x.tar"},
		"bundle import":  {"x.tar"},
		"why":            {"org.slf4j:slf4j-api", "org.slf4j:slf4j-api:2.0.7"},
		"init":           {"--", "--master", "local", "--packages", "org.slf4j:slf4j-api:2.0.7", "app.jar"},
		"doctor":         {"--no-default-repositories", "--repositories", "http://127.0.0.1:1/"},
		"keys add":       {"--keyring", "/nonexistent/k.asc", "KEYS"},
		"keys list":      {"--keyring", "/nonexistent/k.asc"},
		"outdated":       {"--lock", "prebake.lock"},
		"upgrade-report": {"--to", "4.0", "--packages", "org.apache.spark:spark-avro_2.12:3.5.1"},
		"connect add":    {"--remote", "sc://127.0.0.1:1", "--lock", "prebake.lock"},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.Name() == "completion" || sub.Name() == "help" {
				continue
			}
			walk(sub)
			if !sub.Runnable() || sub.HasAvailableSubCommands() {
				continue
			}
			path := strings.Join(strings.Fields(sub.CommandPath())[1:], " ")
			extra, ok := args[path]
			if !ok {
				t.Errorf("%s: add it to TestBadOutputEveryCommand", path)
				continue
			}
			argv := append(append(strings.Fields(path), "-o", "xml"), extra...)
			code, stdout, stderr := runPrebake(context.Background(), argv...)
			if code != exitcode.Usage || !strings.Contains(stderr, `-o "xml"`) || stdout != "" {
				t.Errorf("prebake %s: exit %d, want %d naming -o \"xml\", nothing on stdout\nstdout: %s\nstderr: %s",
					strings.Join(argv, " "), code, exitcode.Usage, stdout, stderr)
			}
		}
	}
	walk(NewRoot())
}

// TestExitCodesFromServices covers the codes that need a service: each one
// on 127.0.0.1 (httptest, the in-process registry and S3), with credentials
// on the command line or in the environment that must never be printed.
func TestExitCodesFromServices(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("PREBAKE_CACHE", filepath.Join(tmp, "cache"))
	t.Setenv("PREBAKE_STORE", "")
	t.Setenv("PREBAKE_IMAGE_TARGET", "")
	t.Setenv("PREBAKE_CONFIG", "")
	t.Setenv("PREBAKE_REGISTRY_AUTH", "")
	t.Setenv("DOCKER_CONFIG", tmp) // no credential helper of the machine
	const (
		repoPW   = "REPOPASSW0RD"
		regPW    = "REGPASSW0RD"
		awsKey   = "AWSS3CRETVALUE"
		awsToken = "AWSSESSIONTOKEN"
	)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsKey)
	t.Setenv("AWS_SESSION_TOKEN", awsToken)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(tmp, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(tmp, "none"))

	status := func(code int) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if code == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			}
			if code == http.StatusForbidden {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(code)
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
				return
			}
			w.WriteHeader(code)
		}))
		t.Cleanup(s.Close)
		return strings.TrimPrefix(s.URL, "http://")
	}
	closed := func() string {
		s := httptest.NewServer(nil)
		s.Close()
		return strings.TrimPrefix(s.URL, "http://")
	}()
	reg := registrytest.InProcess(t)
	s3 := s3test.InProcess(t)

	lock := filepath.Join(tmp, "prebake.lock")
	demo := "file://" + filepath.Join(root, "testdata", "demo-repo") + "/"
	if code, _, errs := runPrebake(context.Background(), "resolve", "-q", "--no-default-repositories", "--repositories", demo, "--lock", lock, "org.slf4j:slf4j-api:2.0.7"); code != 0 {
		t.Fatalf("resolve for the lock: exit %d\n%s", code, errs)
	}
	base := "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0-amd64"
	repo := func(hostport string) []string {
		return []string{"resolve", "--no-default-repositories", "--repositories", "http://alice:" + repoPW + "@" + hostport + "/maven/", "org.slf4j:slf4j-api:2.0.7"}
	}
	bakeS3 := func(endpoint, store string) []string {
		return []string{"bake", "s3", "--lock", lock, "--store", store, "--endpoint", "http://" + endpoint, "--path-style"}
	}
	tests := []struct {
		name string
		args []string
		want int
		msg  string        // in stderr
		max  time.Duration // the retries are bounded
	}{
		{"repository unreachable", repo(closed), exitcode.Unavailable, closed, 15 * time.Second},
		{"repository 401", repo(status(http.StatusUnauthorized)), exitcode.NoPerm, "401 Unauthorized", 5 * time.Second},
		{"repository 403", repo(status(http.StatusForbidden)), exitcode.NoPerm, "403 Forbidden", 5 * time.Second},
		{"registry unreachable", []string{"bake", "image", "--lock", lock, "--base", base, "--target", closed + "/spark/app", "--registry-auth", "bob:" + regPW}, exitcode.Unavailable, closed, 20 * time.Second},
		{"registry 401", []string{"inspect", status(http.StatusUnauthorized) + "/spark/app:tag", "--registry-auth", "bob:" + regPW}, exitcode.NoPerm, "--registry-auth", 10 * time.Second},
		{"image missing in the registry", []string{"inspect", reg + "/spark/app:nope"}, exitcode.NotFound, "spark/app:nope", 10 * time.Second},
		{"S3 unreachable", bakeS3(closed, "s3://bucket/prefix"), exitcode.Unavailable, closed, 30 * time.Second},
		{"S3 403", bakeS3(status(http.StatusForbidden), "s3://bucket/prefix"), exitcode.NoPerm, "permission denied", 10 * time.Second},
		{"S3 bucket missing", bakeS3(strings.TrimPrefix(s3, "http://"), "s3://no-such-bucket/prefix"), exitcode.NotFound, "no-such-bucket", 10 * time.Second},
		{"K8s API server 401", []string{"status", "ns:app-driver", "--master", "k8s://http://" + status(http.StatusUnauthorized),
			"--conf", "spark.kubernetes.authenticate.submission.oauthToken=" + awsToken}, exitcode.NoPerm, "ns/app-driver", 10 * time.Second},
		{"K8s API server unreachable", []string{"kill", "ns:app-driver", "--master", "k8s://http://" + closed,
			"--conf", "spark.kubernetes.authenticate.submission.oauthToken=" + awsToken}, exitcode.Unavailable, closed, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, out := range []string{"", "json"} { // the default, and JSON
				start := time.Now()
				argv := append([]string{}, tt.args...)
				if out != "" {
					argv = append(argv, "-o", out)
				}
				code, stdout, stderr := runPrebake(context.Background(), argv...)
				took := time.Since(start)
				if code != tt.want {
					t.Fatalf("-o %s: exit %d, want %d (%s)\nstderr:\n%s", out, code, tt.want, codeMeaning(tt.want), stderr)
				}
				if !strings.Contains(stderr, tt.msg) {
					t.Errorf("-o %s: stderr does not name %q:\n%s", out, tt.msg, stderr)
				}
				if took > tt.max {
					t.Errorf("-o %s: took %s, want at most %s", out, took, tt.max)
				}
				for _, secret := range []string{repoPW, regPW, awsKey, awsToken} {
					if strings.Contains(stdout+stderr, secret) {
						t.Errorf("-o %s: %s leaked:\nstdout:\n%s\nstderr:\n%s", out, secret, stdout, stderr)
					}
				}
			}
		})
	}
}

// TestSparkSubmitBin: with no --spark-submit and no SPARK_HOME, submit
// finds spark-submit on $PATH (pip's pyspark, Homebrew) as a shell would.
func TestSparkSubmitBin(t *testing.T) {
	onPath := func(string) (string, error) { return "/usr/local/bin/spark-submit", nil }
	notOnPath := func(string) (string, error) { return "", exec.ErrNotFound }
	env := func(home string) func(string) string {
		return func(k string) string {
			if k == "SPARK_HOME" {
				return home
			}
			return ""
		}
	}
	for _, tt := range []struct {
		name, flag, home string
		look             func(string) (string, error)
		want             string
	}{
		{"flag wins", "/opt/x/spark-submit", "/opt/spark", onPath, "/opt/x/spark-submit"},
		{"SPARK_HOME", "", "/opt/spark", onPath, "/opt/spark/bin/spark-submit"},
		{"PATH", "", "", onPath, "/usr/local/bin/spark-submit"},
		{"none", "", "", notOnPath, ""},
	} {
		if got := sparkSubmitBin(tt.flag, env(tt.home), tt.look); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
