package cmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/pgpverify/pgptest"
	"github.com/prebake/prebake/internal/sparkrest/sparkresttest"
	"github.com/prebake/prebake/internal/testenv"
)

var updateJSON = flag.Bool("update", false, "rewrite testdata/json from the commands' output")

// jsonRun is one command whose stdout is the golden of a registry
// document.
type jsonRun struct {
	doc   string   // jsondoc.Doc.Name
	args  []string // prebake's argv
	code  int      // the exit code it must give
	setup func()   // before the run
}

// volatile are what changes from run to run, in the order they are
// replaced: a golden holds the placeholder.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "$$TIME"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:$$PORT"},
	{regexp.MustCompile(`-[0-9a-f]{16}-driver`), "-$$ID-driver"}, // the pod name's random part
	{regexp.MustCompile(`"(durationNs|ms|submitSeconds|pendingSeconds|runSeconds|totalSeconds)":[0-9.e+-]+`), `"$1":0`},
	// A lock names its repositories, here file:// URLs under the checkout,
	// so what hashes or counts a lock's bytes depends on where the
	// checkout is: a bundle's digest and size, the SBOM's inputs hash.
	{regexp.MustCompile(`("kind":"tar","digest":"sha256:)[0-9a-f]{64}`), "${1}$$LOCKDEPENDENT"},
	{regexp.MustCompile(`("jars":\d+,"bytes":)\d+`), "${1}0"},
	{regexp.MustCompile(`("name": "prebake:inputsHash",\s+"value": ")[0-9a-f]{64}`), "${1}$$LOCKDEPENDENT"},
}

// normaliseJSON is out with the run's directories and volatile values
// replaced by placeholders; byte order and layout are kept.
func normaliseJSON(out string, dirs map[string]string) string {
	keys := make([]string, 0, len(dirs))
	for k := range dirs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) }) // longest first
	for _, k := range keys {
		out = strings.ReplaceAll(out, k, dirs[k])
	}
	for _, v := range volatile {
		out = v.re.ReplaceAllString(out, v.with)
	}
	return out
}

// TestJSONGoldens runs, in-process against file:// repositories and
// stores, OCI layouts and the fake Spark REST master, one command per
// registry document (JSONDocs) and compares its -o json stdout, byte for
// byte after normaliseJSON, with testdata/json/NAME.json (-update rewrites
// them). Each golden also validates against its schema (JSONSchema).
// These goldens are the net under a change of a result type: a key
// renamed, reordered or dropped fails here.
func TestJSONGoldens(t *testing.T) {
	root, tmp := isolatedCLI(t)
	work := filepath.Dir(tmp) // every t.TempDir of this test
	t.Setenv("HOME", tmp)
	t.Setenv("DOCKER_CONFIG", filepath.Join(tmp, ".docker"))
	t.Setenv("PREBAKE_REGISTRY_AUTH", "")
	t.Setenv("SPARK_CONF_DIR", t.TempDir())
	t.Setenv("SPARK_HOME", "")
	t.Setenv("SPARK_REMOTE", "")
	t.Setenv("KUBECONFIG", filepath.Join(tmp, "no-kubeconfig"))
	t.Setenv("SOURCE_DATE_EPOCH", "")
	t.Chdir(tmp)
	demo := "file://" + filepath.Join(root, "testdata", "demo-repo") + "/"
	cache := filepath.Join(tmp, "cache")
	res := []string{"--no-default-repositories", "--repositories", demo, "--cache", cache}
	with := func(args ...string) []string { return append(args, res...) }
	lock := filepath.Join(tmp, "prebake.lock")
	coords := []string{"ch.qos.logback:logback-classic:1.4.11", "org.slf4j:slf4j-api:1.7.36"}
	base := "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0"
	store := "file://" + filepath.Join(tmp, "store")
	image := "oci:" + filepath.Join(tmp, "image") + ":job"

	versions := versionsRepo(t)
	vlock := filepath.Join(tmp, "versions.lock")
	signer := pgptest.NewKey(t, "signer")
	keyFile := filepath.Join(tmp, "signer.asc")
	must(t, os.WriteFile(keyFile, signer.Public(t), 0o644))
	sets := filepath.Join(tmp, "sets.yaml")
	must(t, os.WriteFile(sets, []byte("sets:\n  - name: logging\n    packages: [\"ch.qos.logback:logback-classic:1.4.11\"]\n  - name: typo\n    packages: [\"org.slf4j:slf4j-apii:2.0.7\"]\n"), 0o644))
	manifest := filepath.Join(tmp, "app.yaml")
	must(t, os.WriteFile(manifest, []byte("apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata:\n  name: spark-pi\nspec:\n  type: Scala\n  mode: cluster\n  deps:\n    packages:\n      - ch.qos.logback:logback-classic:1.4.11\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n"), 0o644))
	spark := filepath.Join(tmp, "spark")
	must(t, os.MkdirAll(filepath.Join(spark, "jars"), 0o755))
	must(t, os.WriteFile(filepath.Join(spark, "jars", "spark-core_2.12-3.5.7.jar"), []byte("PK"), 0o644))
	sparkSubmit := filepath.Join(tmp, "spark-submit")
	must(t, os.WriteFile(sparkSubmit, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	failingSubmit := filepath.Join(tmp, "failing-spark-submit")
	must(t, os.WriteFile(failingSubmit, []byte("#!/bin/sh\necho 'Exception in thread \"main\" java.lang.IllegalStateException: boom' >&2\nexit 3\n"), 0o755))

	clock := time.Date(2026, 11, 29, 10, 10, 10, 0, time.UTC)
	fake := sparkresttest.New(sparkresttest.WithClock(func() time.Time { return clock }), sparkresttest.WithScript(sparkresttest.Step{State: "SUBMITTED"},
		sparkresttest.Step{State: "RUNNING", WorkerID: "worker-1", WorkerHostPort: "10.0.0.5:40000"},
		sparkresttest.Step{State: "FINISHED", WorkerID: "worker-1", WorkerHostPort: "10.0.0.5:40000"}))
	rs := httptest.NewServer(fake)
	t.Cleanup(rs.Close)
	master := "spark://" + strings.TrimPrefix(rs.URL, "http://")
	k8sMaster := "k8s://https://" + closedAddr(t)
	api := httptest.NewServer(http.HandlerFunc(fakeK8sPods))
	t.Cleanup(api.Close)
	k8sAPI := "k8s://" + api.URL
	batch := filepath.Join(tmp, "batch.jsonl")
	must(t, os.WriteFile(batch, []byte(`["--master","`+k8sMaster+`","--deploy-mode","cluster","--name","a","--conf","spark.kubernetes.container.image=apache/spark:3.5.9","--class","org.example.Main","local:///opt/app.jar"]`+"\n"), 0o644))
	dirs := map[string]string{work: "$TMP", root: "$ROOT", signer.Fingerprint(): "$FINGERPRINT"}

	runs := []jsonRun{
		{"error", with("resolve", "-o", "json", "org.example:absent:1.0"), 66, nil},
		{"resolve", with(append([]string{"resolve", "-o", "json", "--lock", lock}, coords...)...), 0, nil},
		{"outdated", []string{"outdated", "-o", "json", "--no-default-repositories", "--repositories", versions, "--cache", cache, "--lock", vlock}, 0, func() {
			if code, _, errs := runPrebake(context.Background(), "resolve", "-q", "--no-default-repositories", "--repositories", versions, "--cache", cache, "--lock", vlock, "org.o:app:1.0"); code != 0 {
				t.Fatalf("resolve for outdated: exit %d\n%s", code, errs)
			}
		}},
		{"why", with(append([]string{"why", "-o", "json", "org.slf4j:slf4j-api"}, coords...)...), 0, nil},
		{"upgrade-report", []string{"upgrade-report", "-o", "json", "--to", "4.0", "--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "upgrade-repo") + "/", "--cache", filepath.Join(tmp, "upgrade-cache"),
			"--packages", "org.apache.spark:spark-avro_2.12:3.5.1,com.example:lib-good_2.12:1.0,com.example:lib-old_2.12:2.1,org.apache.hadoop:hadoop-aws:3.3.4"}, 0, nil},
		{"lock-diff", []string{"lock", "diff", "-o", "json", filepath.Join(root, "testdata", "lockdiff", "base.lock"), filepath.Join(root, "testdata", "lockdiff", "inputs-changed.lock")}, 0, nil},
		{"keys", []string{"keys", "add", "-o", "json", "--keyring", filepath.Join(tmp, "keyring.asc"), keyFile}, 0, nil},
		{"bundle-export", []string{"bundle", "export", "-o", "json", "--lock", lock, "--cache", cache, "--to", filepath.Join(tmp, "bundle.tar")}, 0, nil},
		{"bundle-import", []string{"bundle", "import", "-o", "json", filepath.Join(tmp, "bundle.tar"), "--cache", filepath.Join(tmp, "cache2"), "--lock", filepath.Join(tmp, "imported.lock")}, 0, nil},
		{"bake-image", []string{"bake", "image", "-o", "json", "--base", base, "--target", image, "--lock", lock, "--cache", cache}, 0, nil},
		{"inspect", []string{"inspect", "-o", "json", image}, 0, nil},
		{"bake-s3", []string{"bake", "s3", "-o", "json", "--store", store, "--lock", lock, "--cache", cache}, 0, nil},
		{"rewrite", append(with("rewrite", "-o", "json", "--store", store, "--lock", lock), "--", "--master", k8sMaster, "--deploy-mode", "cluster", "--packages", strings.Join(coords, ","), "--class", "com.example.Main", "local:///opt/app.jar"), 0, nil},
		{"rewrite-manifest", with("rewrite", "-o", "json", "--store", store, "--manifest", manifest), 0, func() {
			if code, _, errs := runPrebake(context.Background(), with("bake", "s3", "-q", "--store", store, "--lock", filepath.Join(tmp, "logback.lock"), "--packages", coords[0])...); code != 0 {
				t.Fatalf("bake s3 for the manifest: exit %d\n%s", code, errs)
			}
		}},
		{"warm", with("warm", "-o", "json", "--file", sets, "--store", store), 66, nil},
		{"gc", []string{"gc", "-o", "json", "--store", store, "--older-than", "30d", "--dry-run"}, 0, nil},
		{"cache-prune", []string{"cache", "prune", "-o", "json", "--cache", cache, "--older-than", "3650d", "--dry-run"}, 0, nil},
		{"sbom", []string{"sbom", "--lock", lock}, 0, nil},
		{"connect-add", nil, 0, nil},
		{"submit-k8s", append(with("submit", "-o", "json", "--spark-submit", sparkSubmit, "--store", store, "--lock", lock), "--", "--master", k8sAPI, "--deploy-mode", "cluster", "--conf", "spark.kubernetes.container.image=apache/spark:3.5.9", "--packages", strings.Join(coords, ","), "--class", "com.example.Main", "local:///opt/app.jar"), 0, nil},
		{"submit-local", append(with("submit", "-o", "json", "--lock", lock, "--spark-submit", failingSubmit), "--", "--master", "local[2]", "--packages", strings.Join(coords, ","), "app.py"), 3, nil},
		{"submit-rest", []string{"submit", "-o", "json", "--poll-interval", "10ms", "--", "--master", master, "--deploy-mode", "cluster", "--class", "com.example.Main", "hdfs:///app.jar"}, 0, nil},
		{"submit-batch", []string{"submit", "-o", "json", "--batch", batch}, 69, nil},
		{"status-rest", []string{"status", "-o", "json", "--master", master, "driver-20261129101010-0000"}, 0, nil},
		{"status-k8s", []string{"status", "-o", "json", "--master", k8sAPI, "default:spark-pi-driver"}, 0, nil},
		{"doctor", []string{"doctor", "-o", "json", "--no-default-repositories", "--repositories", demo, "--master", master}, 0, func() {
			t.Setenv("SPARK_HOME", spark) // from here on
		}},
		{"init", append(with("init", "-o", "json", "--store", store), "--", "--master", k8sMaster, "--deploy-mode", "cluster", "--packages", coords[0], "local:///opt/app.jar"), 0, func() {
			job := filepath.Join(tmp, "job")
			must(t, os.MkdirAll(job, 0o755))
			t.Chdir(job)
		}},
	}
	seen := map[string]bool{}
	for _, d := range JSONDocs() {
		seen[d.Name] = true
	}
	for _, r := range runs {
		if !seen[r.doc] {
			t.Errorf("run %q: no such document in JSONDocs", r.doc)
		}
		delete(seen, r.doc)
	}
	for n := range seen {
		t.Errorf("document %q has no golden run", n)
	}
	schemas := map[string]*jsondoc.Schema{}
	for _, d := range JSONDocs() {
		s, err := JSONSchema(d)
		if err != nil {
			t.Fatal(err)
		}
		schemas[d.Name] = s
	}

	for _, r := range runs {
		if r.setup != nil {
			r.setup()
		}
		if r.args == nil {
			if d := docByName(r.doc); d.NoGolden == "" {
				t.Errorf("%s: no run, and JSONDocs gives no reason (NoGolden)", r.doc)
			}
			continue
		}
		code, out, errs := runPrebake(context.Background(), r.args...)
		if code != r.code {
			t.Errorf("%s: prebake %s: exit %d, want %d\nstdout: %s\nstderr: %s", r.doc, strings.Join(r.args, " "), code, r.code, out, errs)
			continue
		}
		got := normaliseJSON(out, dirs)
		for _, p := range schemas[r.doc].Validate([]byte(out)) {
			t.Errorf("%s: the output does not match its schema: %s\n%s", r.doc, p, got)
		}
		file := filepath.Join(root, "testdata", "json", r.doc+".json")
		if *updateJSON {
			must(t, os.MkdirAll(filepath.Dir(file), 0o755))
			must(t, os.WriteFile(file, []byte(got), 0o644))
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v (go test ./cmd -run TestJSONGoldens -update writes it)", r.doc, err)
			continue
		}
		if diff := cmp.Diff(string(want), got); diff != "" {
			t.Errorf("%s: prebake %s: -o json changed (-%s +got); a deliberate change: -update:\n%s", r.doc, strings.Join(r.args[:2], " "), file, diff)
		}
	}
}

// fakeK8sPods is an API server whose every driver pod has succeeded: a GET
// of a pod answers it, a list answers one.
func fakeK8sPods(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	name := path.Base(r.URL.Path)
	pod := func(name string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"default","uid":"u1","creationTimestamp":"2026-11-29T10:10:10Z","labels":{"spark-role":"driver"}},` +
			`"spec":{"nodeName":"node-1"},"status":{"phase":"Succeeded","containerStatuses":[{"name":"spark-kubernetes-driver","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}}`
	}
	switch {
	case r.Method != http.MethodGet:
		w.WriteHeader(http.StatusMethodNotAllowed)
	case name == "pods":
		io.WriteString(w, `{"apiVersion":"v1","kind":"PodList","metadata":{},"items":[`+pod("spark-pi-driver")+`]}`)
	default:
		io.WriteString(w, pod(name))
	}
}

// docByName is the registry's document name.
func docByName(name string) jsondoc.Doc {
	for _, d := range JSONDocs() {
		if d.Name == name {
			return d
		}
	}
	return jsondoc.Doc{}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// closedAddr is a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
}
