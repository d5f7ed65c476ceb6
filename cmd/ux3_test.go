package cmd

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/s3store/s3test"
)

// closedURL is an http:// URL on a port nothing listens on (refused at once).
func closedURL(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("http://127.0.0.1:%d/maven/", testenv.FreePort(t))
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
	sparkDemoLink(t)
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
			// Through the spark-submit link (Airflow's SparkSubmitOperator).
			t.Setenv("SPARK_HOME", home)
			t.Setenv("PREBAKE_SPARK_SUBMIT", "")
			t.Setenv("PREBAKE_REPOSITORIES", repo)
			t.Setenv("PREBAKE_NO_DEFAULT_REPOSITORIES", "true")
			var stdout, stderr bytes.Buffer
			if code := ExecuteAsSparkSubmit([]string{"--master", "local[1]", "--packages", "dev.prebake.demo:greeting:1.0", "noop.py"}, &stdout, &stderr); code != 0 {
				t.Errorf("through the link: exit %d\n%s", code, stderr.String())
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

// scalaRepo writes a file:// Maven repository holding com.example:foo_2.13:1.0
// (a Scala 2.13 artifact) and returns its URL.
func scalaRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mod := filepath.Join(dir, "com", "example", "foo_2.13", "1.0")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	pom := `<project><modelVersion>4.0.0</modelVersion><groupId>com.example</groupId><artifactId>foo_2.13</artifactId><version>1.0</version></project>`
	for name, data := range map[string]string{"foo_2.13-1.0.pom": pom, "foo_2.13-1.0.jar": "not really a jar"} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return "file://" + dir + "/"
}

// noSparkBase writes an OCI layout holding an image with no layer at all
// (no /opt/spark/jars) under tag "1" and returns its reference.
func noSparkBase(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "notspark")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "1"})); err != nil {
		t.Fatal(err)
	}
	return "oci:" + dir + ":1"
}

// TestScalaMismatchNeverSilent is finding 2: the Scala mismatch warning
// of bake image was gone on a cache hit (exit 0, silent), and submit
// --image-target never printed it. The verdict is now stored with the
// image and repeated on every hit, submit prints it (through -q), and
// --strict (or strict: in prebake.yaml) fails with 65 before anything is
// pushed, on a hit too.
func TestScalaMismatchNeverSilent(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("HOME", tmp)
	repo := scalaRepo(t)
	base := "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0-amd64"
	common := []string{"--no-default-repositories", "--repositories", repo, "--cache", filepath.Join(tmp, "cache")}
	const warning = "WARNING (scala-binary): com.example:foo_2.13:1.0 is built for Scala 2.13 but the base image has Scala 2.12"

	t.Run("bake image, strict first: nothing pushed", func(t *testing.T) {
		target := filepath.Join(tmp, "strict-img")
		code, out, errs := runPrebake(context.Background(), append([]string{"bake", "image", "--strict", "--base", base, "--target", "oci:" + target, "com.example:foo_2.13:1.0"}, common...)...)
		if code != exitcode.DataErr || out != "" || !strings.Contains(errs, "strict mode") || !strings.Contains(errs, "nothing was pushed") {
			t.Errorf("exit %d, want 65\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if _, err := os.Stat(target); err == nil {
			t.Errorf("a strict bake with a warning wrote %s", target)
		}
	})
	target := "oci:" + filepath.Join(tmp, "img")
	bake := append([]string{"bake", "image", "--base", base, "--target", target, "com.example:foo_2.13:1.0"}, common...)
	for i, what := range []string{"bake", "cache hit"} {
		code, _, errs := runPrebake(context.Background(), append([]string{"-q"}, bake...)...)
		if code != 0 || !strings.Contains(errs, warning) {
			t.Errorf("run %d (%s): exit %d, stderr lacks the warning:\n%s", i+1, what, code, errs)
		}
	}
	code, out, errs := runPrebake(context.Background(), append([]string{"-o", "json"}, bake...)...)
	if code != 0 || !strings.Contains(out, `"cacheHit":true`) || !strings.Contains(out, `"kind":"scala-binary"`) {
		t.Errorf("-o json on the hit: exit %d\n%s\n%s", code, out, errs)
	}
	t.Run("strict on a cache hit", func(t *testing.T) {
		cfg := filepath.Join(tmp, "strict.yaml")
		os.WriteFile(cfg, []byte("strict: true\n"), 0o644)
		code, _, errs := runPrebake(context.Background(), append([]string{"--config", cfg}, bake...)...)
		if code != exitcode.DataErr || !strings.Contains(errs, "a cache hit") || !strings.Contains(errs, "Scala 2.13") {
			t.Errorf("exit %d, want 65\n%s", code, errs)
		}
	})

	submitArgs := func(extra ...string) []string {
		return append(append(append([]string{"submit", "--submitter", "native", "--dry-run", "-o", "yaml", "--image-target", target}, common...), extra...),
			"--", "--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster", "--conf", "spark.kubernetes.container.image="+base,
			"--class", "com.example.Main", "--packages", "com.example:foo_2.13:1.0", "local:///opt/app.jar")
	}
	t.Run("submit --image-target", func(t *testing.T) {
		code, _, errs := runPrebake(context.Background(), submitArgs("-q")...)
		if code != 0 || !strings.Contains(errs, "is built for Scala 2.13 but the base image has Scala 2.12 (scala-binary)") {
			t.Errorf("exit %d, stderr lacks the warning:\n%s", code, errs)
		}
		code, _, errs = runPrebake(context.Background(), submitArgs("--strict")...)
		if code != exitcode.DataErr || !strings.Contains(errs, "strict mode") {
			t.Errorf("--strict: exit %d, want 65\n%s", code, errs)
		}
	})

	t.Run("local mode against $SPARK_HOME/jars", func(t *testing.T) {
		home, argsFile := fakeSparkHome(t, "0")
		os.MkdirAll(filepath.Join(home, "jars"), 0o755)
		for _, j := range []string{"spark-core_2.12-3.5.7.jar", "scala-library-2.12.18.jar"} {
			os.WriteFile(filepath.Join(home, "jars", j), nil, 0o644)
		}
		t.Setenv("SPARK_HOME", home)
		args := append(append([]string{"submit", "-q"}, common...), "--", "--master", "local[1]", "--packages", "com.example:foo_2.13:1.0", "app.py")
		code, _, errs := runPrebake(context.Background(), args...)
		if code != 0 || !strings.Contains(errs, "local Spark "+filepath.Join(home, "jars")+": com.example:foo_2.13:1.0 is built for Scala 2.13 but the local Spark has Scala 2.12") {
			t.Errorf("exit %d, stderr lacks the warning:\n%s", code, errs)
		}
		os.Remove(argsFile)
		strict := append([]string{args[0], "--strict"}, args[1:]...)
		code, _, errs = runPrebake(context.Background(), strict...)
		if code != exitcode.DataErr || !strings.Contains(errs, "nothing was run") {
			t.Errorf("--strict: exit %d, want 65\n%s", code, errs)
		}
		if _, err := os.Stat(argsFile); err == nil {
			t.Error("--strict ran spark-submit")
		}
	})
}

// TestBakeReportSaysWhatHappens is finding 14: every same-version jar was
// a "conflict" line, a different version did not say which copy wins, and
// a base without Spark baked silently. Same-version jars are now one line
// (each with -v), a different version says the base's copy wins, and a
// base without Spark jars is a warning naming --spark-home.
func TestBakeReportSaysWhatHappens(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("HOME", tmp)
	common := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}
	base := noSparkBase(t)
	for _, tt := range []struct {
		name  string
		extra []string
		want  int
		msgs  []string
	}{
		{"base without Spark", nil, 0, []string{"WARNING (no-spark): no Spark in the base: /opt/spark/jars has no spark-core jar", "--spark-home DIR"}},
		{"--spark-home elsewhere", []string{"--spark-home", "/opt/bitnami/spark"}, 0, []string{"/opt/bitnami/spark/jars has no spark-core jar"}},
		{"strict", []string{"--strict"}, exitcode.DataErr, []string{"no Spark in the base"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"bake", "image", "--base", base, "--target", "oci:" + filepath.Join(t.TempDir(), "img"), "org.slf4j:slf4j-api:2.0.7"}, common...), tt.extra...)
			code, _, errs := runPrebake(context.Background(), args...)
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

// TestBakeSummaryConflicts: the text report of finding 14 (and 17's "0
// bytes uploaded" for an OCI layout).
func TestBakeSummaryConflicts(t *testing.T) {
	r := &layers.Result{Tag: "oci:/tmp/img:t", BaseDigest: "sha256:b", Files: []string{"a.jar"}, Layers: []layers.LayerInfo{{}},
		Report: &layers.Report{BaseSparkVersion: "3.5.7", BaseScalaBinary: "2.12", BaseJars: 3, Conflicts: []layers.Conflict{
			{Coord: "org.xerial.snappy:snappy-java:1.1.10.3", Version: "1.1.10.3", BasePath: "/opt/spark/jars/snappy-java-1.1.10.5.jar", BaseVersion: "1.1.10.5"},
			{Coord: "org.slf4j:slf4j-api:2.0.7", Version: "2.0.7", BasePath: "/opt/spark/jars/slf4j-api-2.0.7.jar", BaseVersion: "2.0.7", SameVersion: true},
			{Coord: "com.google.code.findbugs:jsr305:3.0.0", Version: "3.0.0", BasePath: "/opt/spark/jars/jsr305-3.0.0.jar", BaseVersion: "3.0.0", SameVersion: true},
		}}}
	for _, verbose := range []bool{false, true} {
		var b strings.Builder
		printBakeSummary(&b, r, verbose)
		got := b.String()
		for _, want := range []string{
			"oci:/tmp/img:t, written to the OCI layout\n",
			"snappy-java-1.1.10.5.jar (1.1.10.5): different version; the base's copy wins",
			"2 jar(s) the base already has at the same version are in the layer too",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("verbose=%v: lacks %q:\n%s", verbose, want, got)
			}
		}
		if strings.Contains(got, "same version in the base: org.slf4j") != verbose {
			t.Errorf("verbose=%v: the same-version list:\n%s", verbose, got)
		}
	}
}

// TestSmallInconsistencies covers review 3's finding 17 items fixed here:
// submit --url-style presigned warns like bake s3; the in-app packages
// warning of submit names submit; a base the registry cannot serve does
// not say "rerun to resume" (nothing was pushed).
func TestSmallInconsistencies(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("HOME", tmp)
	demo := []string{"--no-default-repositories", "--repositories", "file://" + filepath.Join(root, "testdata", "demo-repo") + "/", "--cache", filepath.Join(tmp, "cache")}

	t.Run("submit presigned", func(t *testing.T) {
		s3 := s3test.InProcess(t, "bucket")
		t.Setenv("AWS_ACCESS_KEY_ID", "test")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
		t.Setenv("AWS_REGION", "us-east-1")
		args := append(append([]string{"submit", "-q", "--submitter", "native", "--dry-run", "-o", "yaml", "--store", "s3://bucket/p", "--endpoint", s3, "--path-style", "--url-style", "presigned"}, demo...),
			"--", "--master", "k8s://https://127.0.0.1:1", "--deploy-mode", "cluster", "--conf", "spark.kubernetes.container.image=apache/spark:3.5.0",
			"--class", "com.example.Main", "--packages", "org.slf4j:slf4j-api:2.0.7", "local:///opt/app.jar")
		// The exit code is the native dry run's (it refuses a "?" in
		// spark.jars, a glob to spark-submit): only the warning is checked.
		code, _, errs := runPrebake(context.Background(), args...)
		if !strings.Contains(errs, "presigned URLs are bearer credentials") {
			t.Errorf("exit %d, stderr lacks the bearer warning:\n%s", code, errs)
		}
	})
	t.Run("in-app packages warning names submit", func(t *testing.T) {
		home, _ := fakeSparkHome(t, "0")
		app := filepath.Join(tmp, "app.py")
		os.WriteFile(app, []byte("from pyspark.sql import SparkSession\nspark = SparkSession.builder.config(\"spark.jars.packages\", \"org.slf4j:slf4j-api:2.0.7\").getOrCreate()\n"), 0o644)
		code, _, errs := runPrebake(context.Background(), append(append([]string{"submit", "--spark-submit", filepath.Join(home, "bin", "spark-submit")}, demo...), "--", "--master", "local[1]", app)...)
		if code != 0 || !strings.Contains(errs, "(prebake submit --packages") || strings.Contains(errs, "prebake rewrite") {
			t.Errorf("exit %d\n%s", code, errs)
		}
	})
	t.Run("unreachable base", func(t *testing.T) {
		closed := strings.TrimSuffix(strings.TrimPrefix(closedURL(t), "http://"), "/maven/")
		code, _, errs := runPrebake(context.Background(), append([]string{"bake", "image", "--base", closed + "/spark:1", "--target", "oci:" + filepath.Join(tmp, "img"), "org.slf4j:slf4j-api:2.0.7"}, demo...)...)
		if code != exitcode.Unavailable || !strings.Contains(errs, "registry unavailable") || strings.Contains(errs, "rerun to resume") {
			t.Errorf("exit %d\n%s", code, errs)
		}
	})
}

// TestWarmTypoSet: review 3 (findings 3 and 17) — in warm, one typo'd set
// among good ones is 66 (not 69: a repository answered), and the summary
// counts the failed set.
func TestWarmTypoSet(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("HOME", tmp)
	sets := filepath.Join(tmp, "sets.yaml")
	os.WriteFile(sets, []byte("sets:\n  - name: good\n    packages: [\"org.slf4j:slf4j-api:2.0.7\"]\n  - name: typo\n    packages: [\"org.slf4j:slf4j-apii:2.0.7\"]\n"), 0o644)
	code, out, errs := runPrebake(context.Background(), "warm", "--file", sets, "--store", "file://"+filepath.Join(tmp, "store"),
		"--no-default-repositories", "--repositories", "file://"+filepath.Join(root, "testdata", "demo-repo")+"/", "--cache", filepath.Join(tmp, "cache"))
	if code != exitcode.NotFound || !strings.Contains(errs, "warm: 2 sets (1 failed)") || !strings.Contains(out, "typo\tFAILED") {
		t.Errorf("exit %d, want 66\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
