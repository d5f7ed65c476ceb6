package cmd

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestLinkPinnedByLock reproduces MEDIUM 1 of review 4: prebake as
// spark-submit (SparkSubmitOperator, no prebake flag) could not pin a
// lock: prebake.yaml refused lock: and frozen: (exit 65) and
// $PREBAKE_LOCK / $PREBAKE_FROZEN were ignored, so every task resolved
// against live repositories. With a lock and frozen (in the file, or in
// the environment), a link-mode run whose repository is down resolves
// nothing: no request, exit 0, and the task log's one line says the set
// came from the lock. A stale lock is exit 78 in spark-submit's language.
func TestLinkPinnedByLock(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	t.Setenv("PREBAKE_SPARK_SUBMIT", "")
	repo := http.FileServer(http.Dir(filepath.Join(root, "testdata", "spark-demo", "repo")))
	var requests atomic.Int64
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		repo.ServeHTTP(w, r)
	}))
	defer srv.Close()
	// The project's directory: the file and the lock next to it; the task
	// runs elsewhere ($PREBAKE_CONFIG), as an Airflow task does.
	project := filepath.Join(tmp, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	base := "cache: " + filepath.Join(tmp, "cache") + "\nrepositories: [" + srv.URL + "/]\nnoDefaultRepositories: true\n"
	cfg := filepath.Join(project, "prebake.yaml")
	if err := os.WriteFile(cfg, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PREBAKE_CONFIG", cfg)
	const pkg = "dev.prebake.demo:greeting:1.0"
	if code, _, errs := runPrebake(t.Context(), "resolve", "-q", "--lock", filepath.Join(project, "prebake.lock"), pkg); code != 0 {
		t.Fatalf("resolve for the lock: exit %d\n%s", code, errs)
	}
	down.Store(true)
	task := filepath.Join(tmp, "task")
	if err := os.MkdirAll(task, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(task)
	argv := []string{"--master", "local[1]", "--packages", pkg, "app.py"}
	for _, tt := range []struct {
		name string
		file string            // prebake.yaml's extra lines
		env  map[string]string // and the environment's
		args []string
		want int
		say  string // in stderr
	}{
		{"lock and frozen in prebake.yaml", "lock: prebake.lock\nfrozen: true\n", nil, argv, 0, "prebake: lock "},
		{"PREBAKE_LOCK and PREBAKE_FROZEN in the environment", "", map[string]string{"PREBAKE_LOCK": filepath.Join(project, "prebake.lock"), "PREBAKE_FROZEN": "true"}, argv, 0, "prebake: lock "},
		{"a stale lock is 78", "lock: prebake.lock\nfrozen: true\n", nil, []string{"--master", "local[1]", "--packages", pkg + ",org.example:other:1.0", "app.py"}, exitcode.StaleLock, "$PREBAKE_FROZEN (prebake.yaml: frozen)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(cfg, []byte(base+tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			home, argsFile := fakeSparkHome(t, "0")
			t.Setenv("SPARK_HOME", home)
			requests.Store(0)
			var stdout, stderr bytes.Buffer
			code := ExecuteAsSparkSubmit(tt.args, &stdout, &stderr)
			if code != tt.want || !strings.Contains(stderr.String(), tt.say) {
				t.Fatalf("exit %d, want %d and %q in stderr:\n%s", code, tt.want, tt.say, stderr.String())
			}
			if n := requests.Load(); n != 0 {
				t.Errorf("%d repository requests, want none", n)
			}
			if tt.want != 0 {
				return
			}
			if !strings.Contains(stderr.String(), " from "+filepath.Join(project, "prebake.lock")+", 1 jar") {
				t.Errorf("the summary line does not say the set came from the lock:\n%s", stderr.String())
			}
			got, err := os.ReadFile(argsFile)
			if err != nil || !strings.Contains(string(got), "dev.prebake.demo_greeting-1.0.jar") || strings.Contains(string(got), "--packages") {
				t.Errorf("spark-submit's argv: %q (%v)", got, err)
			}
		})
	}
}

// TestInitIgnoresFrozenSetting: frozen: in prebake.yaml (or
// $PREBAKE_FROZEN) pins the runs, not init, which is how the pinned lock is
// updated; init's own --frozen still applies.
func TestInitIgnoresFrozenSetting(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	repo := "file://" + filepath.Join(root, "testdata", "demo-repo") + "/"
	line := func(pkg string) []string {
		return []string{"init", "--force", "--no-default-repositories", "--repositories", repo, "--", "--master", "local[1]", "--packages", pkg, "app.py"}
	}
	if code, _, errs := runPrebake(t.Context(), line("org.slf4j:slf4j-api:1.7.36")...); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, errs)
	}
	t.Setenv("PREBAKE_FROZEN", "true")
	if code, out, errs := runPrebake(t.Context(), line("org.slf4j:slf4j-api:2.0.7")...); code != 0 || !strings.Contains(out, "slf4j-api: 1.7.36 -> 2.0.7") {
		t.Errorf("init with $PREBAKE_FROZEN and new packages: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runPrebake(t.Context(), append([]string{"init", "--frozen"}, line("ch.qos.logback:logback-classic:1.4.11")[1:]...)...); code != exitcode.StaleLock {
		t.Errorf("init --frozen with new packages: exit %d, want 78\n%s", code, errs)
	}
}
