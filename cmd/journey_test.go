package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/lock"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
)

// fakeSparkSubmit writes a spark-submit that records that it ran.
func fakeSparkSubmit(t *testing.T, dir string) (bin, ran string) {
	t.Helper()
	bin, ran = filepath.Join(dir, "spark-submit"), filepath.Join(dir, "ran")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"$@\" > "+ran+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, ran
}

// TestPollOnlyK8sNeverSubmits: submit --status-poll-only with a k8s://
// master used to run spark-submit (a second job, or exit 0 in client
// mode). It now polls the pod only; with no API server that is exit 69,
// and neither spark-submit nor the resolution runs.
func TestPollOnlyK8sNeverSubmits(t *testing.T) {
	_, tmp := isolatedCLI(t)
	bin, ran := fakeSparkSubmit(t, tmp)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", tmp)
	for _, extra := range [][]string{{"--deploy-mode", "cluster", "--packages", "org.example:nope:1.0", "local:///a.jar"}, nil} {
		args := append([]string{"submit", "--status-poll-only", "spark-ns:my-driver", "--spark-submit", bin, "--api-retry-timeout", "1s",
			"--not-found-grace", "1s", "--poll-interval", "100ms", "--store", "file://" + tmp + "/store", "--", "--master", "k8s://https://127.0.0.1:1"}, extra...)
		code, _, errs := runPrebake(context.Background(), args...)
		if code != exitcode.Unavailable {
			t.Errorf("%v: exit %d, want 69\n%s", extra, code, errs)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("%v: spark-submit ran", extra)
		}
		if strings.Contains(errs, "submitting") || strings.Contains(errs, "nope") {
			t.Errorf("%v: stderr mentions a submission or a resolution:\n%s", extra, errs)
		}
	}
}

// TestLockRefresh: resolve and why with --lock and no coordinate resolve
// the lock's own inputs (the README's fix for a stale lock).
func TestLockRefresh(t *testing.T) {
	root, tmp := isolatedCLI(t)
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	lock := filepath.Join(tmp, "prebake.lock")
	if code, _, errs := runPrebake(context.Background(), append([]string{"resolve", "-q", "--lock", lock, "--exclude-packages", "ch.qos.logback:logback-core",
		"ch.qos.logback:logback-classic:1.4.11", "org.slf4j:slf4j-api:1.7.36"}, demo...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, errs)
	}
	// A matching lock: read, nothing resolved.
	code, out, errs := runPrebake(context.Background(), append([]string{"resolve", "--lock", lock, "-o", "names"}, demo...)...)
	if code != 0 || out != "ch.qos.logback_logback-classic-1.4.11.jar\norg.slf4j_slf4j-api-2.0.7.jar\n" {
		t.Errorf("resolve --lock: exit %d\n%s\n%s", code, out, errs)
	}
	// The repositories changed: the lock is re-resolved and rewritten
	// (the excludes stay the lock's); --frozen keeps it, by content.
	other := append([]string{}, demo...)
	other[2] = "file://" + filepath.Join(root, "testdata", "demo-repo") + "/./"
	if code, _, errs := runPrebake(context.Background(), append([]string{"resolve", "--lock", lock, "--frozen"}, other...)...); code != 0 || !strings.Contains(errs, "only the repositories changed") {
		t.Errorf("resolve --lock --frozen with other repositories: exit %d\n%s", code, errs)
	}
	if code, out, errs := runPrebake(context.Background(), append([]string{"resolve", "--lock", lock}, other...)...); code != 0 || strings.Contains(out, "logback-core") {
		t.Errorf("refresh: exit %d\n%s\n%s", code, out, errs)
	}
	data, _ := os.ReadFile(lock)
	if !strings.Contains(string(data), "demo-repo/./") || !strings.Contains(string(data), `"ch.qos.logback:logback-core"`) {
		t.Errorf("refreshed lock:\n%s", data)
	}
	if code, out, errs := runPrebake(context.Background(), append([]string{"why", "org.slf4j:slf4j-api", "--lock", lock}, other...)...); code != 0 || !strings.Contains(out, "2.0.7") {
		t.Errorf("why --lock: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runPrebake(context.Background(), "resolve"); code != exitcode.Usage || !strings.Contains(errs, "--lock FILE") {
		t.Errorf("resolve with nothing: exit %d %s", code, errs)
	}
}

// TestEveryCommandReadsPrebakeYAML runs each command from a directory that
// holds only a prebake.yaml: the store, cache, repositories and image
// target come from it (before, only submit read it, so a lock made by
// resolve was stale for submit --frozen).
func TestEveryCommandReadsPrebakeYAML(t *testing.T) {
	root, tmp := isolatedCLI(t)
	dir := filepath.Join(tmp, "job")
	other := filepath.Join(tmp, "other")
	for _, d := range []string{dir, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	yaml := "store: file://" + filepath.Join(tmp, "store") + "\ncache: " + filepath.Join(tmp, "cache") +
		"\nrepositories: [\"file://" + filepath.Join(root, "testdata", "demo-repo") + "/\"]\nnoDefaultRepositories: true\nimageTarget: oci:" + filepath.Join(tmp, "image") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "prebake.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	sets := filepath.Join(other, "sets.yaml")
	if err := os.WriteFile(sets, []byte("sets:\n  - name: slf4j\n    packages: [\"org.slf4j:slf4j-api:2.0.7\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(other, "keep.txt")
	if err := os.WriteFile(keep, []byte(filepath.Join(dir, "prebake.lock")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, ran := fakeSparkSubmit(t, other)
	t.Chdir(dir)
	steps := []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"resolve", "--lock", "prebake.lock", "ch.qos.logback:logback-classic:1.4.11"}, "logback-core:1.4.11"},
		{[]string{"resolve", "--lock", "prebake.lock", "--frozen", "-o", "names"}, "org.slf4j_slf4j-api-2.0.7.jar"},
		{[]string{"why", "org.slf4j:slf4j-api", "--lock", "prebake.lock"}, "2.0.7"},
		{[]string{"bake", "s3", "--lock", "prebake.lock"}, "/jars/sha256/"},
		{[]string{"bake", "image", "--base", "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0", "--lock", "prebake.lock", "-o", "json"}, `"ref":"oci:` + filepath.Join(tmp, "image")},
		{[]string{"rewrite", "--lock", "prebake.lock", "--frozen", "--", "--master", "spark://m1:7077", "--deploy-mode", "cluster",
			"--packages", "ch.qos.logback:logback-classic:1.4.11", "--class", "A", "https://x/app.jar"}, filepath.Join(tmp, "store")},
		{[]string{"warm", "--file", sets}, "slf4j"},
		{[]string{"gc", "--keep-sets", keep, "--grace", "0s", "--dry-run"}, "set\t3ca88651b96d"},
		{[]string{"submit", "--image-target", "", "--lock", "prebake.lock", "--frozen", "--spark-submit", bin, "--", "--master", "k8s://https://127.0.0.1:1",
			"--packages", "ch.qos.logback:logback-classic:1.4.11", "local:///a.jar"}, ""},
	}
	for _, s := range steps {
		code, out, errs := runPrebake(context.Background(), s.args...)
		if code != 0 || !strings.Contains(out, s.want) {
			t.Errorf("%v: exit %d, want %q in stdout\nstdout:\n%s\nstderr:\n%s", s.args, code, s.want, out, errs)
		}
	}
	if data, err := os.ReadFile(ran); err != nil || !strings.Contains(string(data), "logback") {
		t.Errorf("submit did not run spark-submit with the jars: %v %s", err, data)
	}
	// Precedence: a flag beats PREBAKE_*, which beats the file.
	t.Setenv("PREBAKE_STORE", "file://"+filepath.Join(tmp, "env-store"))
	if code, out, errs := runPrebake(context.Background(), "bake", "s3", "--lock", "prebake.lock"); code != 0 || !strings.Contains(out, "env-store") {
		t.Errorf("PREBAKE_STORE over the file: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := runPrebake(context.Background(), "bake", "s3", "--lock", "prebake.lock", "--store", "file://"+filepath.Join(tmp, "flag-store")); code != 0 || !strings.Contains(out, "flag-store") {
		t.Errorf("--store over PREBAKE_STORE: exit %d\n%s\n%s", code, out, errs)
	}
	// --config beats $PREBAKE_CONFIG, which beats ./prebake.yaml.
	t.Setenv("PREBAKE_STORE", "")
	alt := filepath.Join(other, "alt.yaml")
	if err := os.WriteFile(alt, []byte("store: file://"+filepath.Join(tmp, "alt-store")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PREBAKE_CONFIG", alt)
	if code, out, errs := runPrebake(context.Background(), "bake", "s3", "--lock", "prebake.lock", "--cache", filepath.Join(tmp, "cache")); code != 0 || !strings.Contains(out, "alt-store") {
		t.Errorf("$PREBAKE_CONFIG over ./prebake.yaml: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := runPrebake(context.Background(), "bake", "s3", "--config", "prebake.yaml", "--lock", "prebake.lock"); code != 0 || strings.Contains(out, "alt-store") {
		t.Errorf("--config over $PREBAKE_CONFIG: exit %d\n%s\n%s", code, out, errs)
	}
	if err := os.WriteFile(alt, []byte("stor: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runPrebake(context.Background(), "resolve", "--lock", "prebake.lock"); code != exitcode.DataErr || !strings.Contains(errs, "alt.yaml") || !strings.Contains(errs, `unknown key "stor"`) {
		t.Errorf("unknown key: exit %d %s", code, errs)
	}
}

// TestErrorsLeadSomewhere: the first mistakes of a new user get a message
// that names the fix and the right command's flags.
func TestErrorsLeadSomewhere(t *testing.T) {
	_, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	for _, tt := range []struct {
		args []string
		msg  string
		not  string
	}{
		{[]string{"submit", "--store", "file://" + tmp, "--master", "k8s://https://x:6443", "--deploy-mode", "cluster", "local:///a.jar"},
			"spark-submit's arguments go after --: prebake submit [prebake flags] -- --master", ""},
		{[]string{"rewrite", "--master", "local[2]", "--packages", "a:b:1", "app.jar"}, "spark-submit's arguments go after --", ""},
		{[]string{"rewrite", "--class", "A"}, "spark-submit's arguments go after --", ""},
		{[]string{"rewrite"}, "give them after --", "requires at least"},
		{[]string{"resolve", "--nope"}, "unknown flag: --nope", "after --"},
		{[]string{"submit", "--", "--master", "k8s://https://x:6443", "--deploy-mode", "cluster", "--packages", "org.slf4j:slf4j-api:2.0.7", "local:///a.jar"},
			"give --image-target REPO (k8s) or --store", "--image-from"},
		{[]string{"status", "x"}, "prebake status needs --master URL", "prebake submit"},
		{[]string{"kill", "x"}, "prebake kill needs --master URL", "prebake submit"},
		{[]string{"-q", "-v", "resolve", "a:b:1"}, "-q and -v: give one of them", ""},
	} {
		code, _, errs := runPrebake(context.Background(), tt.args...)
		if code != exitcode.Usage || !strings.Contains(errs, tt.msg) || (tt.not != "" && strings.Contains(errs, tt.not)) {
			t.Errorf("%v: exit %d, want 64 with %q (and not %q):\n%s", tt.args, code, tt.msg, tt.not, errs)
		}
	}
}

// TestJSONOnFailure: every command with -o json prints a JSON object on
// failure too, and --result-file writes the result (Airflow XCom).
func TestJSONOnFailure(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Chdir(tmp)
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{append([]string{"resolve", "org.example:nope:1.0"}, demo...), exitcode.NotFound},
		{append([]string{"why", "a:b", "org.example:nope:1.0"}, demo...), exitcode.NotFound},
		{append([]string{"resolve", "--frozen", "--lock", filepath.Join(tmp, "none.lock"), "org.slf4j:slf4j-api:2.0.7"}, demo...), exitcode.StaleLock},
		{[]string{"status", "x"}, exitcode.Usage},
		{[]string{"bake", "s3", "--store", "nope"}, exitcode.Usage},
		{[]string{"resolve", "--", "--bad-flag"}, exitcode.Usage},
		{[]string{"lock", "diff", "a.lock", "b.lock"}, exitcode.NotFound},
	} {
		result := filepath.Join(tmp, "result.json")
		args := append([]string{tt.args[0], "-o", "json", "--result-file", result}, tt.args[1:]...)
		if tt.args[1] == "--" {
			args = []string{tt.args[0], "-o", "json", "--result-file", result, "--bad-flag"}
		}
		code, out, errs := runPrebake(context.Background(), args...)
		var js jsondoc.Error
		if err := json.Unmarshal([]byte(out), &js); err != nil || code != tt.code || js.ExitCode != tt.code || js.Error == "" || js.Source != "prebake" || js.Warnings == nil {
			t.Errorf("%v: exit %d, stdout %q (%v)\n%s", tt.args, code, out, err, errs)
		}
		if data, err := os.ReadFile(result); err != nil || string(data) != out {
			t.Errorf("%v: --result-file holds %q (%v), want stdout", tt.args, data, err)
		}
		os.Remove(result)
	}
	// Success: the file holds the command's own JSON; with -o text, the
	// exit code; warnings are collected.
	result := filepath.Join(tmp, "ok.json")
	code, out, _ := runPrebake(context.Background(), append([]string{"resolve", "-o", "json", "--result-file", result, "org.slf4j:slf4j-api:2.0.7"}, demo...)...)
	if data, _ := os.ReadFile(result); code != 0 || string(data) != out || !strings.Contains(out, `"lockHash"`) {
		t.Errorf("success: exit %d, file %q", code, data)
	}
	store := "file://" + filepath.Join(tmp, "store")
	code, _, _ = runPrebake(context.Background(), append([]string{"rewrite", "-q", "--result-file", result, "--store", store, "--", "--master", "spark://m:7077", "--deploy-mode", "cluster",
		"--packages", "org.slf4j:slf4j-api:2.0.7", "--class", "A", "https://x/app.jar"}, demo...)...)
	var js jsondoc.Error
	data, _ := os.ReadFile(result)
	if err := json.Unmarshal(data, &js); err != nil || code != exitcode.NotFound || js.ExitCode != exitcode.NotFound || !strings.Contains(js.Error, "bake s3") {
		t.Errorf("text failure: exit %d, file %s", code, data)
	}
	if code, out, _ := runPrebake(context.Background(), "--version"); code != 0 || !strings.HasPrefix(out, "prebake ") {
		t.Errorf("--version: exit %d %q", code, out)
	}
}

// TestQuietKeepsOutcomeWarnings: -q hides progress, not the warnings that
// change the outcome (presigned expiry; the Scala mismatch is in
// TestBakeImageQuietScalaWarning).
func TestQuietKeepsOutcomeWarnings(t *testing.T) {
	warned := &warningSink{}
	var b strings.Builder
	rep := (&globals{quiet: true, warnings: warned}).reporter(&b)
	rep.Warnf("hidden by -q")
	rep.Alertf("presigned URLs expire")
	if b.String() != "warning: presigned URLs expire\n" {
		t.Errorf("-q stderr %q", b.String())
	}
	if got := warned.all(); len(got) != 2 {
		t.Errorf("collected warnings %q", got)
	}
}

// TestBakeImageQuietScalaWarning: the Scala mismatch report survives -q
// (the README's own `bake image -q` scripts used to lose it).
func TestBakeImageQuietScalaWarning(t *testing.T) {
	_, tmp := isolatedCLI(t)
	data := []byte("not really a jar")
	sum := sha256.Sum256(data)
	jar := filepath.Join(tmp, "foo.jar")
	if err := os.WriteFile(jar, data, 0o644); err != nil {
		t.Fatal(err)
	}
	lf := &lock.File{Inputs: lock.Inputs{Packages: []string{"com.example:foo_2.13:1.0"}, Conflict: "latest"},
		Artifacts: []lock.Artifact{{Coord: "com.example:foo_2.13:1.0", File: "com.example_foo_2.13-1.0.jar", Sha256: hex.EncodeToString(sum[:]), Size: int64(len(data)), Repository: "file://" + tmp + "/"}}}
	lockPath := filepath.Join(tmp, "prebake.lock")
	if err := lock.Write(lockPath, lf); err != nil {
		t.Fatal(err)
	}
	// The jar is where the lock's repository says.
	dst := filepath.Join(tmp, "com", "example", "foo_2.13", "1.0")
	os.MkdirAll(dst, 0o755)
	os.WriteFile(filepath.Join(dst, "foo_2.13-1.0.jar"), data, 0o644)
	code, out, errs := runPrebake(context.Background(), "bake", "image", "-q", "--result-file", filepath.Join(tmp, "r.json"), "--base", "oci:../testdata/base-image:3.5.0", "--target", "oci:"+filepath.Join(tmp, "img"),
		"--lock", lockPath, "--no-default-repositories", "--repositories", "file://"+tmp+"/", "--cache", filepath.Join(tmp, "cache"))
	if code != 0 || !strings.Contains(errs, "WARNING (scala-binary)") || out == "" {
		t.Errorf("bake image -q: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if data, _ := os.ReadFile(filepath.Join(tmp, "r.json")); !strings.Contains(string(data), "scala-binary") {
		t.Errorf("result file lacks the warning: %s", data)
	}
}

// TestDurationsTakeDays: every duration flag takes the same units (gc
// --grace 1d used to fail while --older-than 1d worked).
func TestDurationsTakeDays(t *testing.T) {
	for in, want := range map[string]time.Duration{"1d": 24 * time.Hour, "1d12h": 36 * time.Hour, "90s": 90 * time.Second, "0s": 0, "-1s": -time.Second} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"d", "1x", "xd", ""} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parseDuration(%q): want an error", bad)
		}
	}
	_, tmp := isolatedCLI(t)
	code, _, errs := runPrebake(context.Background(), "gc", "--store", "file://"+tmp, "--older-than", "30d", "--grace", "1d", "--dry-run")
	if code != 0 {
		t.Errorf("gc --grace 1d: exit %d\n%s", code, errs)
	}
	if code, _, errs := runPrebake(context.Background(), "submit", "--timeout", "2x", "--", "--master", "spark://m:7077"); code != exitcode.Usage || !strings.Contains(errs, "30d, 12h") {
		t.Errorf("bad duration: exit %d %s", code, errs)
	}
}

// TestCompletionAndFlags: completion offers the enum values; flags that did
// nothing are gone; inspect without a transport says so.
func TestCompletionAndFlags(t *testing.T) {
	root, _ := isolatedCLI(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "resolve", "-o", ""}, "tree\nnames\njson\n"},
		{[]string{"__complete", "gc", "-o", ""}, "text\njson\n"},
		{[]string{"__complete", "why", "--conflict", ""}, "latest\nnearest\n"},
		{[]string{"__complete", "rewrite", "--url-style", ""}, "s3a\npresigned\nhttps\n"},
		{[]string{"__complete", "submit", "--checksum-policy", ""}, "strict\nwarn\nignore\n"},
		// Review 3, finding 17: no values for --submitter and --compression.
		{[]string{"__complete", "submit", "--submitter", ""}, "spark-submit\nnative\nauto\n"},
		{[]string{"__complete", "bake", "image", "--compression", ""}, "none\ngzip\nzstd\n"},
	} {
		code, out, _ := runPrebake(context.Background(), tt.args...)
		if code != 0 || !strings.HasPrefix(out, tt.want) {
			t.Errorf("%v: exit %d %q, want %q first", tt.args, code, out, tt.want)
		}
	}
	for _, tt := range [][]string{
		{"inspect", "--jobs", "2", "oci:x"},
		{"gc", "--concurrency", "2", "--store", "file:///x", "--older-than", "1d"},
		{"rewrite", "--jobs", "2", "--", "x"},
		{"rewrite", "--concurrency", "2", "--", "x"},
		{"warm", "--packages", "a:b:1", "--file", "x"},
		{"warm", "--lock", "x.lock", "--file", "x"},
	} {
		if code, _, errs := runPrebake(context.Background(), tt...); code != exitcode.Usage || !strings.Contains(errs, "unknown flag") {
			t.Errorf("%v: exit %d %s, want unknown flag", tt, code, errs)
		}
	}
	t.Chdir(root)
	for ref, msg := range map[string]string{
		"testdata/base-image":       "that is a directory here; an OCI layout is named oci:testdata/base-image",
		"testdata/base-image:3.5.0": "testdata/base-image is a directory here",
		"team/spark":                "no registry host",
	} {
		if code, _, errs := runPrebake(context.Background(), "inspect", ref); code != exitcode.Usage || !strings.Contains(errs, msg) {
			t.Errorf("inspect %s: exit %d %s", ref, code, errs)
		}
	}
	code, out, errs := runPrebake(context.Background(), "inspect", "oci:testdata/base-image:3.5.0")
	if code != 0 || !strings.Contains(errs, "no dev.prebake.* annotations") || out == "" {
		t.Errorf("inspect of a plain image: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestInit: prebake init writes a prebake.yaml and a lock from a
// spark-submit command line, and submit --frozen from that directory uses
// them as they are.
func TestInit(t *testing.T) {
	root, tmp := isolatedCLI(t)
	dir := filepath.Join(tmp, "job")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, ran := fakeSparkSubmit(t, tmp)
	t.Chdir(dir)
	argv := []string{"--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "client", "--packages", "ch.qos.logback:logback-classic:1.4.11", "local:///a.jar"}
	code, out, errs := runPrebake(context.Background(), append([]string{"init", "--store", "file://" + filepath.Join(tmp, "store"), "--no-default-repositories",
		"--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache"), "-o", "json", "--"}, argv...)...)
	var js jsondoc.Init
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || js.Jars != 3 || !strings.HasPrefix(js.Next, "prebake submit --lock prebake.lock --frozen -- --master") {
		t.Fatalf("init: exit %d %v\n%s\n%s", code, err, out, errs)
	}
	yml, _ := os.ReadFile("prebake.yaml")
	for _, want := range []string{"store: file://", "noDefaultRepositories: true", "repositories:\n    - file://"} {
		if !strings.Contains(string(yml), want) {
			t.Errorf("prebake.yaml lacks %q:\n%s", want, yml)
		}
	}
	// The cache is this machine's (review 4, HIGH 3; TestInitWritesNoSecret).
	if strings.Contains(string(yml), "cache:") || !strings.Contains(errs, "cache (this machine's") {
		t.Errorf("init wrote the cache into prebake.yaml, or did not say it left it out:\n%s\n%s", yml, errs)
	}
	if code, _, errs := runPrebake(context.Background(), append([]string{"submit", "--lock", "prebake.lock", "--frozen", "--spark-submit", bin, "--"}, argv...)...); code != 0 {
		t.Errorf("submit --frozen after init: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("spark-submit did not run: %v", err)
	}
	// A second init with other settings than the file's changes nothing;
	// a line with no packages pins nothing (init again: TestInitAgain).
	if code, _, errs := runPrebake(context.Background(), append([]string{"init", "--store", "file://" + filepath.Join(tmp, "other-store"), "--"}, argv...)...); code != exitcode.Usage || !strings.Contains(errs, "--force") {
		t.Errorf("init over prebake.yaml: exit %d %s", code, errs)
	}
	if code, _, errs := runPrebake(context.Background(), "init", "--force", "--", "--master", "local", "a.jar"); code != exitcode.Usage || !strings.Contains(errs, "nothing to pin") {
		t.Errorf("init with no packages: exit %d %s", code, errs)
	}
}

// TestInitNextQuoted is audit 3 N9: the next: command init prints (text and
// -o json) is shell-quoted, so that eval of it gives back the exact argv:
// no command substitution runs, local[1] is not a glob, spaces do not split.
func TestInitNextQuoted(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	root, tmp := isolatedCLI(t)
	dir := filepath.Join(tmp, "job")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if err := os.WriteFile("local1", nil, 0o644); err != nil { // what an unquoted local[1] would match
		t.Fatal(err)
	}
	inj := filepath.Join(tmp, "INJ_INIT")
	argv := []string{"--master", "local[1]", "--packages", "org.slf4j:slf4j-api:2.0.7", "app.py", "arg with space", "$(touch " + inj + ")", "it's", ""}
	for _, out := range []string{"text", "json"} {
		t.Run(out, func(t *testing.T) {
			code, stdout, errs := runPrebake(context.Background(), append([]string{"init", "--force", "--file", "my conf.yaml", "--store", "file://" + filepath.Join(tmp, "store"),
				"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/",
				"--cache", filepath.Join(tmp, "cache"), "-o", out, "--"}, argv...)...)
			if code != 0 {
				t.Fatalf("init: exit %d\n%s", code, errs)
			}
			var next string
			if out == "json" {
				var js jsondoc.Init
				if err := json.Unmarshal([]byte(stdout), &js); err != nil {
					t.Fatal(err)
				}
				next = js.Next
			} else {
				_, next, _ = strings.Cut(stdout, "\nnext: ")
				next = strings.TrimSuffix(next, "\n")
			}
			cmd := exec.Command(bash, "-c", `prebake() { printf "%s\n" "$@"; }; eval "$NEXT"`)
			cmd.Env = append(os.Environ(), "NEXT="+next)
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("eval %s: %v", next, err)
			}
			want := append([]string{"submit", "--config", "my conf.yaml", "--lock", "prebake.lock", "--frozen", "--"}, argv...)
			if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")); diff != "" {
				t.Errorf("eval of %s (-want +got):\n%s", next, diff)
			}
			if _, err := os.Stat(inj); err == nil {
				t.Errorf("eval of %s ran the command substitution", next)
			}
		})
	}
}

// TestInitAgain reproduces finding 9 of review 3: init with --store and
// --image-target wrote both keys, and its own next command failed (64,
// "give one of them"); init again with a changed package list failed (64,
// "prebake.yaml exists") and left the lock as it was. Both keys are now
// refused at init, and init again keeps the file, updates the lock and
// lists what changed.
func TestInitAgain(t *testing.T) {
	root, tmp := isolatedCLI(t)
	dir := filepath.Join(tmp, "job")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	flags := []string{"--store", "file://" + filepath.Join(tmp, "store"), "--no-default-repositories",
		"--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	line := func(pkgs string) []string {
		return []string{"--", "--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster", "--packages", pkgs, "local:///a.jar"}
	}
	code, _, errs := runPrebake(context.Background(), append(append([]string{"init", "--image-target", "127.0.0.1:5055/team/spark-jobs"}, flags...), line("org.slf4j:slf4j-api:1.7.36")...)...)
	if code != exitcode.Usage || !strings.Contains(errs, "give one of them") {
		t.Errorf("init with a store and an image target: exit %d, want 64\n%s", code, errs)
	}
	if _, err := os.Stat("prebake.yaml"); err == nil {
		t.Errorf("init with both wrote prebake.yaml")
	}
	if code, _, errs := runPrebake(context.Background(), append(append([]string{"init"}, flags...), line("org.slf4j:slf4j-api:1.7.36")...)...); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, errs)
	}
	yml, _ := os.ReadFile("prebake.yaml")
	// Again, the same flags, another package list: kept, lock updated.
	code, out, errs := runPrebake(context.Background(), append(append([]string{"init"}, flags...), line("ch.qos.logback:logback-classic:1.4.11")...)...)
	if code != 0 || !strings.Contains(out, "kept prebake.yaml; updated prebake.lock") {
		t.Fatalf("init again: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"+ ch.qos.logback:logback-classic:1.4.11", "+ ch.qos.logback:logback-core:1.4.11", "~ org.slf4j:slf4j-api: 1.7.36 -> 2.0.7"} {
		if !strings.Contains(out, want) {
			t.Errorf("init again does not say %q:\n%s", want, out)
		}
	}
	if after, _ := os.ReadFile("prebake.yaml"); string(after) != string(yml) {
		t.Errorf("prebake.yaml changed:\n%s", after)
	}
	// Again with no settings flag at all (they come from the file), -o json.
	code, out, errs = runPrebake(context.Background(), append([]string{"init", "-o", "json"}, line("ch.qos.logback:logback-classic:1.4.11")...)...)
	var js jsondoc.Init
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || !js.ConfigKept || len(js.Changes) != 0 || js.Jars != 3 {
		t.Errorf("init again, same packages: exit %d %v %+v\n%s", code, err, js, errs)
	}
}
