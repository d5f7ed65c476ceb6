package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver/pypi"
	"github.com/prebake/prebake/submit/k8s/native"
)

// linesFile is the recorded list of pyspark lines the recipe in
// docs/contributing.md ("Supporting a new Spark line") updates.
var linesFile = filepath.Join("..", "..", "testdata", "pyspark-lines.txt")

// line is a Spark line, major.minor.
type line struct{ major, minor int }

func (l line) String() string { return fmt.Sprintf("%d.%d", l.major, l.minor) }

func (l line) less(o line) bool {
	return l.major < o.major || l.major == o.major && l.minor < o.minor
}

func parseLine(s string) (line, error) {
	maj, min, ok := strings.Cut(s, ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil || a < 0 || b < 0 {
		return line{}, fmt.Errorf("%q: want major.minor, e.g. 4.3", s)
	}
	return line{a, b}, nil
}

// recordedLines reads testdata/pyspark-lines.txt: one line a row, "#"
// comments, oldest first.
func recordedLines(t *testing.T) []line {
	t.Helper()
	f, err := os.Open(linesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []line
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		l, err := parseLine(s)
		if err != nil {
			t.Fatalf("%s:%d: %v", linesFile, n, err)
		}
		if len(out) > 0 && !out[len(out)-1].less(l) {
			t.Fatalf("%s:%d: %s is not after %s: keep the list sorted, oldest first", linesFile, n, l, out[len(out)-1])
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no line", linesFile)
	}
	return out
}

// TestNewestPysparkLineKnown fails when the newest recorded pyspark line
// is unknown to prebake: the native submitter's rules (native.KnownLines),
// the per-line patches the equivalence oracle submits with
// (testenv.SparkLinePatches) and the pyspark versions the machines install
// (hack/infra.d/60-spark.sh). The recipe in docs/contributing.md says how
// to add one.
func TestNewestPysparkLineKnown(t *testing.T) {
	lines := recordedLines(t)
	newest := lines[len(lines)-1].String()
	recipe := "follow docs/contributing.md, \"Supporting a new Spark line\""
	if !slices.Contains(native.KnownLines, newest) {
		t.Errorf("Spark %s (newest in %s) is not in native.KnownLines %v: %s", newest, linesFile, native.KnownLines, recipe)
	}
	hasPatch := func(vs []string) bool {
		return slices.ContainsFunc(vs, func(v string) bool { return strings.HasPrefix(v, newest+".") })
	}
	if !hasPatch(testenv.SparkLinePatches) {
		t.Errorf("Spark %s has no patch in testenv.SparkLinePatches %v: %s", newest, testenv.SparkLinePatches, recipe)
	}
	script, err := os.ReadFile(filepath.Join("..", "infra.d", "60-spark.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`spark_versions="\$\{PREBAKE_SPARK_VERSIONS:-([0-9. ]+)\}"`).FindSubmatch(script)
	if m == nil {
		t.Fatal("hack/infra.d/60-spark.sh: no spark_versions default found")
	}
	if !hasPatch(strings.Fields(string(m[1]))) {
		t.Errorf("Spark %s has no pyspark pin in hack/infra.d/60-spark.sh (%s): %s", newest, m[1], recipe)
	}
}

// pysparkRelease matches a final pyspark release's file (an sdist or a
// wheel): pre-releases, previews and dev builds are not a line yet.
var pysparkRelease = regexp.MustCompile(`^pyspark-(\d+)\.(\d+)\.(\d+)(?:\.tar\.gz|-py[^/]*\.whl)$`)

// newestIndexLine is the newest line with a final, unyanked release among
// files.
func newestIndexLine(files []pypi.IndexFile) (line, bool) {
	var best line
	found := false
	for _, f := range files {
		m := pysparkRelease.FindStringSubmatch(f.Filename)
		if m == nil || f.Yanked {
			continue
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		if l := (line{a, b}); !found || best.less(l) {
			best, found = l, true
		}
	}
	return best, found
}

func TestNewestIndexLine(t *testing.T) {
	files := func(names ...string) []pypi.IndexFile {
		var out []pypi.IndexFile
		for _, n := range names {
			out = append(out, pypi.IndexFile{Filename: n})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		files []pypi.IndexFile
		want  string
	}{
		{"sdists", files("pyspark-3.5.9.tar.gz", "pyspark-4.3.0.tar.gz", "pyspark-4.10.1.tar.gz"), "4.10"},
		{"previews and rcs are not lines", files("pyspark-4.3.0.tar.gz", "pyspark-4.4.0.dev1.tar.gz", "pyspark-5.0.0-preview1.tar.gz", "pyspark-4.4.0rc1.tar.gz"), "4.3"},
		{"yanked", append(files("pyspark-4.2.1.tar.gz"), pypi.IndexFile{Filename: "pyspark-4.3.0.tar.gz", Yanked: true}), "4.2"},
		{"wheel", files("pyspark-4.2.1.tar.gz", "pyspark-4.3.0-py2.py3-none-any.whl"), "4.3"},
		{"none", files("pyspark-connect-4.3.0.tar.gz"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := newestIndexLine(tc.files)
			got := ""
			if ok {
				got = l.String()
			}
			if got != tc.want {
				t.Errorf("newest = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPysparkLinesCurrentIT asks the package index the machine's pip is
// configured with (pip.conf, PIP_INDEX_URL, …, as resolver/pypi reads them)
// for pyspark's releases and fails when its newest line is not recorded in
// testdata/pyspark-lines.txt: a new Spark minor is out, and the recipe in
// docs/contributing.md is due.
func TestPysparkLinesCurrentIT(t *testing.T) {
	testenv.RequireIT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := pypi.LoadIndexConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NoIndex || cfg.IndexURL == "" {
		t.Fatalf("pip is configured without an index (%s): cannot ask for pyspark's releases", cfg)
	}
	cl, err := pypi.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var files []pypi.IndexFile
	for _, ix := range append([]string{cfg.IndexURL}, cfg.ExtraIndexURLs...) {
		p, err := cl.Project(ctx, ix, "pyspark")
		if err != nil {
			t.Fatalf("pyspark's page (%s): %v", cfg, err)
		}
		files = append(files, p.Files...)
	}
	newest, ok := newestIndexLine(files)
	if !ok {
		t.Fatalf("%s: no final pyspark release found among %d files", cfg, len(files))
	}
	lines := recordedLines(t)
	if !slices.Contains(lines, newest) {
		t.Errorf("the index (%s) has pyspark %s, not in %s (newest recorded: %s): add it and follow docs/contributing.md, \"Supporting a new Spark line\"",
			cfg, newest, linesFile, lines[len(lines)-1])
	}
	t.Logf("newest pyspark line on %s: %s", cfg, newest)
}
