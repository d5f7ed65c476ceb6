package doctor

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/netprobe"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver"
)

var update = flag.Bool("update", false, "rewrite testdata/report.json")

// closedPort returns a 127.0.0.1 URL on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("http://127.0.0.1:%d/", testenv.FreePort(t))
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// env is a test environment: three repositories (one answers 200, one 404
// for the probe but is up, one a closed port), a HOME whose ~/.m2 has one
// POM-only module, one full module and one parent POM, a Docker config.
type env struct {
	home, ok, notFound, closed string
	rest                       *httptest.Server
	auths                      chan string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{home: t.TempDir(), closed: closedPort(t), auths: make(chan string, 10)}
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, _, has := r.BasicAuth(); has {
			e.auths <- u
		}
		if r.Method != http.MethodHead || r.URL.Path != "/maven2/" {
			t.Errorf("ok repository: %s %s, want one HEAD of the root", r.Method, r.URL.Path)
		}
	}))
	t.Cleanup(ok.Close)
	nf := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(nf.Close)
	e.rest = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest) // Spark's answer for an unknown submission
	}))
	t.Cleanup(e.rest.Close)
	e.ok, e.notFound = ok.URL+"/maven2/", nf.URL+"/"

	m2 := filepath.Join(e.home, ".m2", "repository")
	write(t, filepath.Join(m2, "org/slf4j/slf4j-api/1.7.36/slf4j-api-1.7.36.pom"), `<project><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>1.7.36</version></project>`)
	write(t, filepath.Join(m2, "org/slf4j/slf4j-parent/1.7.36/slf4j-parent-1.7.36.pom"), `<project><artifactId>slf4j-parent</artifactId><packaging>pom</packaging></project>`)
	write(t, filepath.Join(m2, "com/example/full/1.0/full-1.0.pom"), `<project><artifactId>full</artifactId></project>`)
	write(t, filepath.Join(m2, "com/example/full/1.0/full-1.0.jar"), "PK")
	write(t, filepath.Join(e.home, ".docker", "config.json"), `{"auths":{"https://index.docker.io/v1/":{"auth":"c2VjcmV0OnNlY3JldA=="},"registry.example.com":{"auth":"eDp5"}},"credHelpers":{"123.dkr.ecr.eu-west-1.amazonaws.com":"ecr-login"}}`)
	return e
}

func (e *env) input() Input {
	return Input{
		Resolve:      resolver.Request{NoDefaultRepositories: true, Repositories: []string{strings.Replace(e.ok, "http://", "http://alice:s3cret@", 1), e.notFound, e.closed}, Home: e.home},
		Home:         e.home,
		DockerConfig: filepath.Join(e.home, ".docker"),
		ImageRefs:    []string{"registry.example.com/team/jobs", "123.dkr.ecr.eu-west-1.amazonaws.com/jobs", "spark:3.5.7", "ghcr.io/x/y"},
		NoPing:       true, // the credential sources; doctor_probe_test pings
	}
}

// TestCheckRepositories: each repository's answer, and the exit decision
// (OK is false when one does not answer).
func TestCheckRepositories(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name   string
		repos  []string
		status []string
		ok     bool
	}{
		{"up", []string{e.ok}, []string{netprobe.StatusOK}, true},
		{"404 for the probe, but up", []string{e.notFound}, []string{netprobe.StatusAnswered}, true},
		{"closed port", []string{e.closed}, []string{netprobe.StatusUnreachable}, false},
		// The closed one comes after one that answered: a warning.
		{"all three", []string{e.ok, e.notFound, e.closed}, []string{netprobe.StatusOK, netprobe.StatusAnswered, netprobe.StatusUnreachable}, true},
		{"closed first", []string{e.closed, e.ok}, []string{netprobe.StatusUnreachable, netprobe.StatusOK}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := e.input()
			in.Resolve.Repositories = tc.repos
			r, err := Check(context.Background(), in, WithTimeout(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range r.Repositories {
				got = append(got, p.Status)
			}
			if diff := cmp.Diff(tc.status, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if r.OK != tc.ok {
				t.Errorf("OK = %v, want %v (unreachable %v)", r.OK, tc.ok, r.Unreachable)
			}
		})
	}
}

// TestCheckRepositoryURLRedacted is audit 4 L5: a repository URL with a
// token in its query is reported without it (-o json's url, the
// unreachable list, the warnings).
func TestCheckRepositoryURLRedacted(t *testing.T) {
	e := newEnv(t)
	in := e.input()
	in.Resolve.Repositories = []string{strings.TrimSuffix(e.ok, "/") + "/?token=QUERYTOK55", strings.TrimSuffix(e.closed, "/") + "/?token=QUERYTOK55"}
	r, err := Check(context.Background(), in, WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "QUERYTOK55") || !strings.Contains(string(b), "?REDACTED") {
		t.Errorf("report: %s", b)
	}
}

// TestCheckSparkHome: the Spark line from jars/spark-core_*.jar, else RELEASE.
func TestCheckSparkHome(t *testing.T) {
	jars, release, empty := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(jars, "jars", "spark-core_2.13-4.0.1.jar"), "PK")
	write(t, filepath.Join(jars, "RELEASE"), "Spark 9.9.9 built for Hadoop 3.4.1\n")
	write(t, filepath.Join(release, "RELEASE"), "Spark 3.5.7 built for Hadoop 3.3.4\nBuild flags: -B\n")
	tests := []struct {
		name string
		dir  string
		want SparkHome
	}{
		{"unset", "", SparkHome{}},
		{"jars", jars, SparkHome{Path: jars, SparkVersion: "4.0.1", ScalaBinary: "2.13", From: "jars"}},
		{"RELEASE", release, SparkHome{Path: release, SparkVersion: "3.5.7", From: "RELEASE"}},
		{"neither", empty, SparkHome{Path: empty, Error: "no jars/spark-core_*.jar and no RELEASE file naming the Spark version"}},
		{"missing", filepath.Join(empty, "nope"), SparkHome{Path: filepath.Join(empty, "nope"), Error: "not a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, sparkHome(tc.dir)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefHost: the registry host of a reference, as Docker reads it.
func TestRefHost(t *testing.T) {
	for ref, want := range map[string]string{
		"spark:3.5.7":                    dockerHub,
		"apache/spark:3.5.7":             dockerHub,
		"docker.io/apache/spark":         dockerHub,
		"localhost/x":                    "localhost",
		"127.0.0.1:5000/team/jobs":       "127.0.0.1:5000",
		"registry.example.com/team/jobs": "registry.example.com",
	} {
		if got := refHost(ref); got != want {
			t.Errorf("refHost(%q) = %q, want %q", ref, got, want)
		}
	}
}

// TestCheckReportGolden: the whole report, as `prebake doctor -o json`
// prints it (times zeroed, temp paths and ports replaced), against
// testdata/report.json; no credential value appears in it.
func TestCheckReportGolden(t *testing.T) {
	e := newEnv(t)
	in := e.input()
	spark := t.TempDir()
	write(t, filepath.Join(spark, "jars", "spark-core_2.12-3.5.7.jar"), "PK")
	in.SparkHome = spark
	in.Master = "spark://" + strings.TrimPrefix(e.rest.URL, "http://")
	in.RESTURLs = []string{e.rest.URL}
	in.Store = "file:///var/jars"
	r, err := Check(context.Background(), in, WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-e.auths:
		if u != "alice" {
			t.Errorf("basic auth user %q", u)
		}
	default:
		t.Error("the repository's credentials were not sent")
	}
	for i := range r.Repositories {
		r.Repositories[i].Millis = 0
	}
	for i := range r.Master.REST {
		r.Master.REST[i].Millis = 0
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := string(data) + "\n"
	for _, s := range []string{"s3cret", "c2VjcmV0", "eDp5"} {
		if strings.Contains(got, s) {
			t.Errorf("the report holds a credential (%s):\n%s", s, got)
		}
	}
	for old, repl := range map[string]string{
		e.home: "$HOME", spark: "$SPARK_HOME",
		strings.TrimSuffix(strings.TrimPrefix(e.ok, "http://"), "/maven2/"): "ok.test",
		strings.TrimSuffix(strings.TrimPrefix(e.notFound, "http://"), "/"):  "notfound.test",
		strings.TrimSuffix(strings.TrimPrefix(e.closed, "http://"), "/"):    "closed.test",
		strings.TrimPrefix(e.rest.URL, "http://"):                           "master.test",
	} {
		got = strings.ReplaceAll(got, old, repl)
	}
	golden := filepath.Join("testdata", "report.json")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("report (-%s +got); go test -run TestCheckReportGolden ./pipeline/doctor -update rewrites it:\n%s", golden, diff)
	}
}
