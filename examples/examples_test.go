// Package examples checks that the examples under examples/ are valid and
// that the runnable ones run: the Airflow DAG compiles, the Kubernetes and
// sets YAML have the shape prebake and Kubernetes expect, and the CI step
// bakes an image twice with a cache hit the second time.
package examples

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/prebake/prebake/cmd"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver/repo"
)

// root is the repository root.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExampleAirflowDAGCompiles(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to check examples/airflow (apt-get install python3)")
	}
	cmd := exec.Command(py, "-m", "py_compile", "airflow/prebake_spark_dag.py")
	cmd.Env = append(os.Environ(), "PYTHONPYCACHEPREFIX="+t.TempDir()) // no __pycache__ in the tree
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
	src, err := os.ReadFile("airflow/prebake_spark_dag.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"KubernetesPodOperator", `cmds=["prebake"]`, `"submit"`, `"--"`, "--packages"} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("the DAG lacks %s", want)
		}
	}
}

// yamlDocs decodes every document of a YAML file.
func yamlDocs(t *testing.T, name string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var d map[string]any
		if err := dec.Decode(&d); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", name, err)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
	return docs
}

// at walks m along keys (maps) and indexes (lists).
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestExampleWarmJob(t *testing.T) {
	docs := yamlDocs(t, "warm-job.yaml")
	var job map[string]any
	for _, d := range docs {
		if d["kind"] == "Job" {
			job = d
		}
	}
	if job == nil {
		t.Fatal("warm-job.yaml has no Job")
	}
	if at(job, "apiVersion") != "batch/v1" || at(job, "spec", "completionMode") != "Indexed" {
		t.Errorf("the Job must be a batch/v1 indexed Job: %v %v", at(job, "apiVersion"), at(job, "spec", "completionMode"))
	}
	completions, _ := at(job, "spec", "completions").(int)
	args, _ := at(job, "spec", "template", "spec", "containers", 0, "args").([]any)
	var strs []string
	for _, a := range args {
		s, _ := a.(string)
		strs = append(strs, s)
	}
	if len(strs) == 0 || strs[0] != "warm" {
		t.Fatalf("the container must run `prebake warm`: args %q", strs)
	}
	shard := ""
	for _, a := range strs {
		if v, ok := strings.CutPrefix(a, "--shard="); ok {
			shard = v
		}
	}
	if want := "$(JOB_COMPLETION_INDEX)/" + strconv.Itoa(completions); completions == 0 || shard != want {
		t.Errorf("--shard=%q, want %q (JOB_COMPLETION_INDEX over spec.completions)", shard, want)
	}
	if at(job, "spec", "template", "spec", "restartPolicy") != "Never" {
		t.Error("an indexed Job's pods need restartPolicy Never (or OnFailure)")
	}
	// The sets file the Job mounts is a prebake sets file.
	for _, a := range strs {
		if f, ok := strings.CutPrefix(a, "--file="); ok && !strings.HasSuffix(f, "sets.yaml") {
			t.Errorf("--file=%s: the Job mounts examples/sets.yaml as sets.yaml", f)
		}
	}
}

func TestExampleSets(t *testing.T) {
	docs := yamlDocs(t, "sets.yaml")
	if len(docs) != 1 {
		t.Fatalf("sets.yaml: %d documents, want 1", len(docs))
	}
	d := docs[0]
	for k := range d {
		if k != "store" && k != "sets" {
			t.Errorf("sets.yaml: unknown top-level key %q", k)
		}
	}
	sets, _ := d["sets"].([]any)
	if len(sets) == 0 {
		t.Fatal("sets.yaml has no sets")
	}
	names := map[string]bool{}
	for i, s := range sets {
		m, _ := s.(map[string]any)
		name, _ := m["name"].(string)
		if name == "" || names[name] {
			t.Errorf("set %d: missing or duplicate name %q", i, name)
		}
		names[name] = true
		pkgs, _ := m["packages"].([]any)
		if len(pkgs) == 0 && m["lock"] == nil {
			t.Errorf("set %s: needs packages or a lock", name)
		}
		for _, p := range pkgs {
			if ps, _ := p.(string); strings.Count(ps, ":") < 2 {
				t.Errorf("set %s: %q is not g:a:v", name, p)
			}
		}
		for k := range m {
			switch k {
			case "name", "packages", "repositories", "excludes", "conflict", "lock":
			default:
				t.Errorf("set %s: unknown key %q", name, k)
			}
		}
		if c, ok := m["conflict"]; ok && c != "latest" && c != "nearest" {
			t.Errorf("set %s: conflict %v", name, c)
		}
	}
}

func TestExampleSparkApplication(t *testing.T) {
	docs := yamlDocs(t, "spark-application.yaml")
	if len(docs) != 1 || docs[0]["kind"] != "SparkApplication" {
		t.Fatalf("spark-application.yaml: want one SparkApplication, got %d docs", len(docs))
	}
	if pkgs, _ := at(docs[0], "spec", "deps", "packages").([]any); len(pkgs) == 0 {
		t.Error("the example needs spec.deps.packages for rewrite --manifest to replace")
	}
}

// workflowBakeStep returns the GitHub Actions example and the script of
// its step that bakes (id bake).
func workflowBakeStep(t *testing.T) (map[string]any, string) {
	t.Helper()
	docs := yamlDocs(t, "ci/github-actions-bake-image.yml")
	if len(docs) != 1 {
		t.Fatalf("%d documents", len(docs))
	}
	w := docs[0]
	jobs, _ := w["jobs"].(map[string]any)
	for _, j := range jobs {
		steps, _ := at(j, "steps").([]any)
		for _, s := range steps {
			if at(s, "id") == "bake" {
				run, _ := at(s, "run").(string)
				return w, run
			}
		}
	}
	t.Fatal("the workflow has no step with id bake")
	return nil, ""
}

// The workflow runs as copied into a user's repository: no step calls a
// file of prebake's repository, and it installs a pinned prebake (a
// variable at the top), never @latest.
func TestExampleGitHubWorkflow(t *testing.T) {
	w, bake := workflowBakeStep(t)
	if at(w, "on", "push") == nil {
		t.Error("the workflow must run on push (every commit)")
	}
	if !strings.Contains(bake, "prebake bake image") || !strings.Contains(bake, "$GITHUB_OUTPUT") {
		t.Errorf("the bake step must run prebake bake image and set its output inline:\n%s", bake)
	}
	version, _ := at(w, "env", "PREBAKE_VERSION").(string)
	if version == "" || version == "latest" {
		t.Errorf("env.PREBAKE_VERSION %q: the workflow must pin prebake's version at its top", version)
	}
	installs := 0
	jobs, _ := w["jobs"].(map[string]any)
	for _, j := range jobs {
		steps, _ := at(j, "steps").([]any)
		for _, s := range steps {
			run, _ := at(s, "run").(string)
			if strings.Contains(run, "examples/") || strings.Contains(run, ".sh") {
				t.Errorf("step %v runs a file of prebake's repository, which a user's repository lacks: %s", at(s, "name"), run)
			}
			if strings.Contains(run, "@latest") {
				t.Errorf("step %v installs @latest: %s", at(s, "name"), run)
			}
			if strings.Contains(run, "go install github.com/prebake/prebake/cmd/prebake@") || strings.Contains(run, `go install "github.com/prebake/prebake/cmd/prebake@`) {
				installs++
				if !strings.Contains(run, "@${PREBAKE_VERSION}") {
					t.Errorf("step %v installs prebake without the pinned $PREBAKE_VERSION: %s", at(s, "name"), run)
				}
			}
		}
	}
	if installs != 1 {
		t.Errorf("%d steps install prebake, want 1", installs)
	}
}

// TestExampleCIBakeImage runs the CI step twice against OCI layouts: the
// first run bakes, the second (same lock) is a cache hit with the same
// digest. It runs examples/ci/bake-image.sh, and the GitHub Actions
// example's bake step as its workflow holds it (bash -eo pipefail, prebake
// on PATH, as GitHub's runner runs it).
func TestExampleCIBakeImage(t *testing.T) {
	t.Run("bake-image.sh", func(t *testing.T) { testCIBakeImage(t, false) })
	t.Run("github-actions", func(t *testing.T) { testCIBakeImage(t, true) })
}

func testCIBakeImage(t *testing.T, workflow bool) {
	r := root(t)
	_, script := workflowBakeStep(t)
	tmp := t.TempDir()
	bin := testenv.Prebake(t)
	cache := filepath.Join(tmp, "cache")
	lock := filepath.Join(tmp, "prebake.lock")
	resolve := exec.Command(bin, "resolve", "-q", "--no-default-repositories",
		"--repositories", "file://"+filepath.Join(r, "testdata", "demo-repo")+"/",
		"--cache", cache, "--lock", lock,
		"ch.qos.logback:logback-classic:1.4.11", "org.slf4j:slf4j-api:1.7.36")
	if out, err := resolve.CombinedOutput(); err != nil {
		t.Fatalf("resolve: %v\n%s", err, out)
	}
	type bakeJSON struct {
		Ref      string `json:"ref"`
		Digest   string `json:"digest"`
		CacheHit bool   `json:"cacheHit"`
		LockHash string `json:"lockHash"`
	}
	run := func(n int) (bakeJSON, string) {
		t.Helper()
		out := filepath.Join(tmp, "bake-"+strconv.Itoa(n)+".json")
		ghOut := filepath.Join(tmp, "github-output-"+strconv.Itoa(n))
		cmd := exec.Command("bash", filepath.Join(r, "examples", "ci", "bake-image.sh"))
		if workflow {
			out = filepath.Join(tmp, "bake-image.json") // the step's own name
			cmd = exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		}
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(),
			"BASE_IMAGE=oci:"+filepath.Join(r, "testdata", "base-image")+":3.5.0",
			"TARGET_IMAGE=oci:"+filepath.Join(tmp, "image"),
			"LOCK="+lock, "PREBAKE="+bin, "BAKE_JSON="+out,
			"PREBAKE_CACHE="+cache, "GITHUB_OUTPUT="+ghOut,
			"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("bake-image.sh run %d: %v\nstdout:\n%s\nstderr:\n%s", n, err, stdout.String(), stderr.String())
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var b bakeJSON
		if err := json.Unmarshal(data, &b); err != nil {
			t.Fatalf("run %d: %s: %v", n, out, err)
		}
		if got := strings.TrimSpace(stdout.String()); !workflow && got != b.Ref {
			t.Errorf("run %d: stdout %q, want the ref %q", n, got, b.Ref)
		}
		gh, err := os.ReadFile(ghOut)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(gh), "image="+b.Ref+"\n") {
			t.Errorf("run %d: $GITHUB_OUTPUT %q lacks image=%s", n, gh, b.Ref)
		}
		return b, stderr.String()
	}
	first, _ := run(1)
	if first.CacheHit {
		t.Fatalf("first bake into an empty layout was a cache hit: %+v", first)
	}
	second, stderr2 := run(2)
	if !second.CacheHit {
		t.Errorf("second bake with the same lock was not a cache hit: %+v", second)
	}
	if second.Digest != first.Digest || second.Ref != first.Ref || second.LockHash != first.LockHash {
		t.Errorf("second bake: %+v, want the first's digest %+v", second, first)
	}
	if !strings.Contains(stderr2, "bake-image: cache hit") {
		t.Errorf("second run's stderr lacks the cache-hit line:\n%s", stderr2)
	}
}

// TestExampleSetsFromCentral checks that every set of sets.yaml can
// succeed as shipped: a set names no repository but Maven Central (none
// only on spark-packages or a placeholder host), and every lock a set
// names exists, parses, and records Central and real jars (no placeholder
// of a few hundred bytes).
func TestExampleSetsFromCentral(t *testing.T) {
	docs := yamlDocs(t, "sets.yaml")
	sets, _ := docs[0]["sets"].([]any)
	pinned := 0
	for i, s := range sets {
		name, _ := at(s, "name").(string)
		repos, _ := at(s, "repositories").([]any)
		for _, r := range repos {
			if r != repo.DefaultCentralURL {
				t.Errorf("set %s: repository %v: the example's sets resolve from Maven Central (%s) as shipped", name, r, repo.DefaultCentralURL)
			}
		}
		lockPath, _ := at(s, "lock").(string)
		if lockPath == "" {
			continue
		}
		pinned++
		l, err := lock.Read(lockPath)
		if err != nil {
			t.Errorf("set %d: lock %s: %v", i, lockPath, err)
			continue
		}
		for _, r := range l.Inputs.Repositories {
			if r != repo.DefaultCentralURL {
				t.Errorf("set %s: lock %s resolves from %s, not Maven Central", name, lockPath, r)
			}
		}
		for _, a := range l.Artifacts {
			if a.Repository != repo.DefaultCentralURL || a.Size < 4096 {
				t.Errorf("set %s: lock %s: %s from %s, %d bytes: want a real jar from Maven Central", name, lockPath, a.File, a.Repository, a.Size)
			}
		}
	}
	if pinned == 0 {
		t.Fatal("sets.yaml pins no set with a lock")
	}
}

// TestExampleSetsRunIT runs the example as it is, against Maven Central:
// `prebake warm --file examples/sets.yaml` warms every set into a store
// and exits 0; a second run sends no jar bytes.
func TestExampleSetsRunIT(t *testing.T) {
	testenv.RequireIT(t)
	tmp := t.TempDir()
	t.Setenv("PREBAKE_CONFIG", "")
	t.Setenv("PREBAKE_STORE", "")
	sets, _ := yamlDocs(t, "sets.yaml")[0]["sets"].([]any)
	type result struct {
		Sets []struct {
			Name      string `json:"name"`
			Hit       bool   `json:"hit"`
			BytesSent int64  `json:"bytesSent"`
		} `json:"sets"`
	}
	args := []string{"warm", "--file", "sets.yaml", "--store", "file://" + filepath.Join(tmp, "store"), "--cache", filepath.Join(tmp, "cache"), "-o", "json"}
	for run := 1; run <= 2; run++ {
		var out, errs bytes.Buffer
		if code := cmd.ExecuteContext(context.Background(), args, &out, &errs); code != 0 {
			t.Fatalf("run %d: warm --file examples/sets.yaml: exit %d\n%s\n%s", run, code, out.String(), errs.String())
		}
		var res result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, out.String())
		}
		if len(res.Sets) != len(sets) {
			t.Errorf("run %d: %d sets warmed, want %d", run, len(res.Sets), len(sets))
		}
		for _, s := range res.Sets {
			if run == 2 && (!s.Hit || s.BytesSent != 0) {
				t.Errorf("run 2: set %s: hit %v, %d bytes sent: want a hit sending nothing", s.Name, s.Hit, s.BytesSent)
			}
		}
	}
}

func TestExampleWarmJobShipsImageAndLocks(t *testing.T) {
	docs := yamlDocs(t, "warm-job.yaml")
	readme, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d["kind"] != "Job" {
			continue
		}
		img, _ := at(d, "spec", "template", "spec", "containers", 0, "image").(string)
		if !bytes.Contains(readme, []byte("make image IMAGE="+img)) {
			t.Errorf("the Job's image %s: the README must say how to publish it (make image IMAGE=%s)", img, img)
		}
		items, _ := at(d, "spec", "template", "spec", "volumes", 0, "configMap", "items").([]any)
		paths := map[string]bool{}
		for _, it := range items {
			p, _ := at(it, "path").(string)
			paths[p] = true
		}
		sets, _ := yamlDocs(t, "sets.yaml")[0]["sets"].([]any)
		for _, s := range sets {
			if lock, _ := at(s, "lock").(string); lock != "" && !paths[lock] {
				t.Errorf("the Job's ConfigMap volume does not mount %s beside sets.yaml", lock)
			}
		}
	}
}

func TestExampleAirflowShipsLockRBACCacheXCom(t *testing.T) {
	src, err := os.ReadFile("airflow/prebake_spark_dag.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"V1ConfigMapVolumeSource", `LOCK_DIR + "/prebake.lock"`, `"PREBAKE_CACHE": CACHE_DIR`, "V1EmptyDirVolumeSource",
		`"--result-file", "/airflow/xcom/return.json"`, "do_xcom_push=True", "examples/airflow/rbac.yaml", `service_account_name="spark-submitter"`} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("the DAG lacks %s", want)
		}
	}
	need := map[string][]string{"pods": {"create", "get", "list", "delete"}, "pods/log": {"get"}, "services": {"create", "patch", "delete"}, "configmaps": {"create", "patch", "delete"}}
	for _, d := range yamlDocs(t, "airflow/rbac.yaml") {
		if d["kind"] != "Role" || at(d, "metadata", "name") != "spark-submitter" {
			continue
		}
		rules, _ := d["rules"].([]any)
		for _, r := range rules {
			res, _ := at(r, "resources").([]any)
			verbs, _ := at(r, "verbs").([]any)
			for _, x := range res {
				for _, v := range verbs {
					need[x.(string)] = slices.DeleteFunc(need[x.(string)], func(s string) bool { return s == v })
				}
			}
		}
	}
	for res, verbs := range need {
		if len(verbs) > 0 {
			t.Errorf("rbac.yaml: spark-submitter lacks %v on %s", verbs, res)
		}
	}
}

// TestExampleWarmJobCacheNoWarning replays the warm Job's cache volume: an
// emptyDir (0777, root's), its init container's command, then prebake as
// the container's user. With the init container prebake prints no warning
// about the cache; without it, the emptyDir would draw one (the control).
func TestExampleWarmJobCacheNoWarning(t *testing.T) {
	bin := testenv.Prebake(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and setpriv (util-linux) to run prebake as the Job's user")
	}
	var job map[string]any
	for _, d := range yamlDocs(t, "warm-job.yaml") {
		if d["kind"] == "Job" {
			job = d
		}
	}
	pod := at(job, "spec", "template", "spec")
	uid, _ := at(pod, "containers", 0, "securityContext", "runAsUser").(int)
	if uid == 0 {
		t.Fatal("the warm container must run as a non-root runAsUser")
	}
	var initCmd []string
	mount := ""
	if m, _ := at(pod, "volumes", 1, "emptyDir").(map[string]any); m == nil || at(pod, "volumes", 1, "name") != "cache" {
		t.Fatalf("volume 1 must be the cache emptyDir: %v", at(pod, "volumes", 1))
	}
	for _, a := range at(pod, "initContainers", 0, "command").([]any) {
		initCmd = append(initCmd, a.(string))
	}
	mount, _ = at(pod, "initContainers", 0, "volumeMounts", 0, "mountPath").(string)
	if at(pod, "initContainers", 0, "volumeMounts", 0, "name") != "cache" || len(initCmd) == 0 {
		t.Fatalf("the init container must prepare the cache volume: %v %v", initCmd, mount)
	}
	r := root(t)
	repoDir := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("cp", "-r", filepath.Join(r, "testdata", "demo-repo"), repoDir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if out, err := exec.Command("chmod", "-R", "a+rX", filepath.Dir(repoDir)).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v %s", err, out)
	}
	for _, withInit := range []bool{true, false} {
		base := t.TempDir()
		for _, d := range []string{base, filepath.Dir(base)} { // t.TempDir's are 0700: let the Job's user in
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cache := filepath.Join(base, "cache")
		if err := os.Mkdir(cache, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(cache, 0o777); err != nil { // as the kubelet makes an emptyDir
			t.Fatal(err)
		}
		if withInit {
			args := slices.Clone(initCmd)
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, mount, cache)
			}
			if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("init container's %q: %v %s", args, err, out)
			}
		}
		var stderr bytes.Buffer
		c := exec.Command(setpriv, "--reuid", strconv.Itoa(uid), "--regid", strconv.Itoa(uid), "--clear-groups",
			bin, "resolve", "--no-default-repositories", "--repositories", "file://"+repoDir+"/",
			"--cache", cache, "ch.qos.logback:logback-classic:1.4.11")
		c.Env = []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin"}
		c.Stderr = &stderr
		if err := c.Run(); err != nil {
			t.Fatalf("init %v: prebake as uid %d: %v\n%s", withInit, uid, err, stderr.String())
		}
		warned := strings.Contains(stderr.String(), "warning: cache directory")
		if warned == withInit {
			t.Errorf("init container %v: warned %v, want %v:\n%s", withInit, warned, !withInit, stderr.String())
		}
	}
}
