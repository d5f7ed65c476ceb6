package cmd

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// closedURL is an http:// URL on a port nothing listens on (refused at once).
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/maven/"
}

// TestTypoIsNotAnOutage is review 3's finding 3: a typo'd coordinate that
// one repository answered 404 for, while another was unreachable, was exit
// 69 with the network error first. The answer that came back now leads, the
// unreachable repository is named, and the code is 66; with no answer at
// all (only unreachable repositories) it stays 69, an outage.
func TestTypoIsNotAnOutage(t *testing.T) {
	_, tmp := isolatedCLI(t)
	t.Setenv("HOME", tmp)
	central := httptest.NewServer(http.NotFoundHandler())
	defer central.Close()
	down := closedURL(t)
	cache := filepath.Join(tmp, "cache")
	tests := []struct {
		name  string
		repos string
		want  int
		msgs  []string
	}{
		{"404 and unreachable", central.URL + "/," + down, exitcode.NotFound,
			[]string{"org.apache.sprak:spark-avro_2.12:3.5.1: not found in repo-1 (" + central.URL + "/); could not ask repo-2 (" + down + ")"}},
		{"unreachable first, then 404", down + "," + central.URL + "/", exitcode.NotFound,
			[]string{"not found in repo-2 (" + central.URL + "/); could not ask repo-1 (" + down + ")"}},
		{"only unreachable", down, exitcode.Unavailable, []string{"could not ask repo-1 (" + down + ")"}},
		{"only 404", central.URL + "/", exitcode.NotFound, []string{"not found in repo-1 (" + central.URL + "/)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runPrebake(context.Background(), "resolve", "--no-default-repositories", "--repositories", tt.repos, "--cache", cache,
				"org.apache.sprak:spark-avro_2.12:3.5.1")
			if code != tt.want {
				t.Fatalf("exit %d, want %d\n%s", code, tt.want, errs)
			}
			for _, m := range tt.msgs {
				if !strings.Contains(errs, m) {
					t.Errorf("stderr lacks %q:\n%s", m, errs)
				}
			}
		})
	}
}

// TestOfflineMissIsUnavailable is finding 12: resolve --offline with an
// empty cache was 66 although the README says 69 (nothing was asked).
func TestOfflineMissIsUnavailable(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("HOME", tmp)
	code, _, errs := runPrebake(context.Background(), "resolve", "--offline", "--cache", filepath.Join(tmp, "empty"),
		"--repositories", "file://"+filepath.Join(root, "testdata", "demo-repo")+"/", "org.apache.spark:spark-avro_2.12:3.5.1")
	if code != exitcode.Unavailable || !strings.Contains(errs, "(offline: not asked)") {
		t.Errorf("exit %d, want 69\n%s", code, errs)
	}
}

// TestNoMasterIsLocal is finding 4: no --master anywhere was exit 64
// ("prebake submit needs k8s://, spark:// or mesos:// after --"), also
// through the spark-submit link; it is now spark-submit's default,
// local[*], run by the real spark-submit. An unknown master lists every
// master prebake takes, and the link's messages name no prebake flag.
func TestNoMasterIsLocal(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	repo := "file://" + filepath.Join(root, "testdata", "spark-demo", "repo") + "/"
	cfg := filepath.Join(tmp, "prebake.yaml")
	if err := os.WriteFile(cfg, []byte("cache: "+filepath.Join(tmp, "cache")+"\nrepositories: ["+repo+"]\nnoDefaultRepositories: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PREBAKE_CONFIG", cfg)
	t.Setenv("PREBAKE_SPARK_SUBMIT", "")
	t.Setenv("MASTER", "")
	home, argsFile := fakeSparkHome(t, "3")
	t.Setenv("SPARK_HOME", home)
	ranWith := func() string {
		t.Helper()
		data, err := os.ReadFile(argsFile)
		if err != nil {
			t.Fatalf("spark-submit did not run: %v", err)
		}
		os.Remove(argsFile)
		return strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", " ")
	}
	args := []string{"--packages", "dev.prebake.demo:greeting:1.0", "avro_app.py"}

	t.Run("submit", func(t *testing.T) {
		code, _, errs := runPrebake(context.Background(), append([]string{"submit", "-o", "json", "--"}, args...)...)
		if code != 3 {
			t.Fatalf("exit %d, want the driver's 3\n%s", code, errs)
		}
		if got := ranWith(); strings.Contains(got, "--packages") || !strings.Contains(got, "dev.prebake.demo_greeting-1.0.jar") {
			t.Errorf("spark-submit ran with %s", got)
		}
	})
	t.Run("spark-submit link", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := ExecuteAsSparkSubmit(args, &stdout, &stderr); code != 3 {
			t.Fatalf("exit %d, want 3\n%s", code, stderr.String())
		}
		if got := ranWith(); !strings.Contains(got, "dev.prebake.demo_greeting-1.0.jar") {
			t.Errorf("spark-submit ran with %s", got)
		}
	})
	t.Run("unknown master lists them all", func(t *testing.T) {
		code, _, errs := runPrebake(context.Background(), "submit", "--", "--master", "k8s:/host:6443", "app.py")
		for _, want := range []string{`--master "k8s:/host:6443"`, "local[*]", "yarn", "spark://", "mesos://", "k8s://"} {
			if code != exitcode.Usage || !strings.Contains(errs, want) {
				t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, errs)
			}
		}
	})
	t.Run("link messages speak spark-submit", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := ExecuteAsSparkSubmit([]string{"--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster", "--packages", "dev.prebake.demo:greeting:1.0", "local:///app.jar"}, &stdout, &stderr)
		errs := stderr.String()
		if code != exitcode.Usage || !strings.Contains(errs, "$PREBAKE_IMAGE_TARGET") || strings.Contains(errs, "--image-target") || strings.Contains(errs, " -- ") {
			t.Errorf("exit %d, want 64 in spark-submit's terms:\n%s", code, errs)
		}
		if !strings.HasPrefix(errs, "prebake (as spark-submit): ") {
			t.Errorf("stderr %q", errs)
		}
	})
}

// TestWorkerWideTargetsIgnoredLocally is finding 5: with a worker-wide
// $PREBAKE_IMAGE_TARGET a local job was exit 64, with $PREBAKE_STORE it
// uploaded the set to the store. Both are now ignored for a driver that
// runs here, with a -v line.
func TestWorkerWideTargetsIgnoredLocally(t *testing.T) {
	root, tmp := isolatedCLI(t)
	repo := "file://" + filepath.Join(root, "testdata", "spark-demo", "repo") + "/"
	home, argsFile := fakeSparkHome(t, "0")
	store := filepath.Join(tmp, "store")
	for _, env := range []struct{ name, value string }{
		{"PREBAKE_IMAGE_TARGET", "oci:" + filepath.Join(tmp, "image")},
		{"PREBAKE_STORE", "file://" + store},
	} {
		t.Run(env.name, func(t *testing.T) {
			t.Setenv(env.name, env.value)
			for _, master := range []string{"local[1]", "spark://127.0.0.1:1"} { // client mode on a standalone master
				code, _, errs := runPrebake(context.Background(), "submit", "-v", "--spark-submit", filepath.Join(home, "bin", "spark-submit"),
					"--no-default-repositories", "--repositories", repo, "--cache", filepath.Join(tmp, "cache"), "--",
					"--master", master, "--packages", "dev.prebake.demo:greeting:1.0", "noop.py")
				if code != 0 {
					t.Fatalf("%s: exit %d\n%s", master, code, errs)
				}
				if want := env.value + " ($" + env.name + ") ignored: master " + master + " runs the driver here"; !strings.Contains(errs, want) {
					t.Errorf("%s: stderr lacks %q:\n%s", master, want, errs)
				}
				if data, _ := os.ReadFile(argsFile); !strings.Contains(string(data), "dev.prebake.demo_greeting-1.0.jar") {
					t.Errorf("%s: spark-submit ran with %s", master, data)
				}
			}
			for _, p := range []string{store, filepath.Join(tmp, "image")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
		})
	}
}

// TestTildeInConfig is finding 13: cache: ~/pbcache in prebake.yaml made
// a directory named "~" in the working directory.
func TestTildeInConfig(t *testing.T) {
	root, tmp := isolatedCLI(t)
	home, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	os.MkdirAll(work, 0o755)
	t.Setenv("HOME", home)
	t.Setenv("PREBAKE_CACHE", "")
	t.Chdir(work)
	cfg := filepath.Join(work, "t.yaml")
	if err := os.WriteFile(cfg, []byte("cache: ~/pbcache\nnoDefaultRepositories: true\nrepositories: [file://"+filepath.Join(root, "testdata", "demo-repo")+"/]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runPrebake(context.Background(), "resolve", "--config", cfg, "-q", "org.slf4j:slf4j-api:2.0.7"); code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(work, "~")); err == nil {
		t.Error(`a directory named "~" was made in the working directory`)
	}
	if _, err := os.Stat(filepath.Join(home, "pbcache")); err != nil {
		t.Errorf("the cache is not in $HOME/pbcache: %v", err)
	}
}
