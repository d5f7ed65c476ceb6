package resolver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prebake/prebake/resolver/repo"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/testenv"
)

// A parity case is NAME.coords (the --packages value), NAME.repos (one
// repository URL a line; ${PARITY} = testdata/parity, ${CORPUS} =
// ../shared/corpus), optional NAME.exclude, and NAME.expected: the real Ivy
// oracle's output (hack/parity -refresh), never written by hand.
type parityCase struct {
	name, dir       string
	coords, exclude string
	repos           []string
	expectJars      []string
	expectErr       bool
	expectedRaw     string
	// ivy is the Request.IvyVersion the case is resolved with ("" the
	// default line's).
	ivy string
}

func loadParityCases(t *testing.T, dir string, vars map[string]string) []parityCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.coords"))
	if err != nil {
		t.Fatal(err)
	}
	var out []parityCase
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".coords")
		read := func(ext string) string {
			b, err := os.ReadFile(filepath.Join(dir, name+ext))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			return strings.TrimSpace(string(b))
		}
		c := parityCase{name: name, dir: dir, coords: read(".coords"), exclude: read(".exclude")}
		for _, r := range strings.Split(read(".repos"), "\n") {
			if r = strings.TrimSpace(r); r != "" {
				for k, v := range vars {
					r = strings.ReplaceAll(r, "${"+k+"}", v)
				}
				c.repos = append(c.repos, r)
			}
		}
		c.setExpected(read(".expected"))
		out = append(out, c)
	}
	return out
}

// setExpected sets the oracle's answer, raw: its output.
func (c *parityCase) setExpected(raw string) {
	c.expectedRaw, c.expectJars, c.expectErr = raw, nil, false
	for _, l := range strings.Split(raw, "\n") {
		switch {
		case strings.HasPrefix(l, "jar "):
			c.expectJars = append(c.expectJars, strings.TrimPrefix(l, "jar "))
		case strings.HasPrefix(l, "error "):
			c.expectErr = true
		}
	}
}

// resolveWithFS builds the graph through the test file-system Source and
// checks every artifact exists (Ivy's retrieve), returning Spark's names.
func resolveWithFS(ctx context.Context, t testing.TB, c parityCase) ([]string, error) {
	src, err := newFSSource(t, c.repos)
	if err != nil {
		return nil, err
	}
	req := Request{Packages: []string{c.coords}, IvyVersion: c.ivy}
	if c.exclude != "" {
		req.Excludes = []string{c.exclude}
	}
	g, err := BuildGraph(ctx, req, src, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range g.Artifacts {
		if _, err := src.Artifact(ctx, a); err != nil {
			return nil, err
		}
		names = append(names, repo.SparkFileName(a.Group, a.Artifact, a.Version, a.Classifier, a.Ext))
	}
	sort.Strings(names)
	return names, nil
}

func runParity(t *testing.T, cases []parityCase) {
	if len(cases) == 0 {
		t.Fatal("no parity cases found")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			names, err := resolveWithFS(context.Background(), t, c)
			if c.expectErr {
				if err == nil {
					t.Fatalf("oracle failed (%s) but resolution succeeded with %v", c.expectedRaw, names)
				}
				if p := errorMismatch(c, err); p != "" {
					t.Errorf("%s\nerror: %v\noracle:\n%s", p, err, c.expectedRaw)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolution failed: %v\noracle:\n%s", err, c.expectedRaw)
			}
			if diff := cmp.Diff(c.expectJars, names); diff != "" {
				t.Errorf("jars differ from the oracle (-oracle +prebake):\n%s", diff)
			}
		})
	}
}

// errorMismatch checks prebake's error against the oracle's "error" lines:
// an unresolved dependency names one of the modules Ivy could not resolve
// (Ivy lists them all, prebake stops at the first) and, when Ivy found it
// nowhere, every repository tried; a failed download names the artifact;
// a bad coordinate says which form is expected.
func errorMismatch(c parityCase, err error) string {
	msg := err.Error()
	var unresolved []string
	notFound := false
	for _, l := range strings.Split(c.expectedRaw, "\n") {
		l = strings.TrimPrefix(l, "error ")
		switch {
		case strings.HasPrefix(l, "unresolved dependency: "):
			mod, reason, _ := strings.Cut(strings.TrimPrefix(l, "unresolved dependency: "), ": ")
			unresolved = append(unresolved, mod)
			notFound = notFound || reason == "not found"
		case strings.HasPrefix(l, "download failed: "):
			ref := strings.TrimPrefix(l, "download failed: ")
			mod, file, _ := strings.Cut(ref, "!")
			parts := strings.Split(strings.Replace(mod, ";", "#", 1), "#")
			name := parts[1] + "-" + parts[2]
			if !strings.Contains(msg, name) {
				return fmt.Sprintf("the error does not name the artifact %s (%s)", name, file)
			}
		case strings.Contains(l, "Provided Maven Coordinates must be in the form"):
			if !strings.Contains(msg, "groupId:artifactId:version") {
				return "the error does not give the expected coordinate form"
			}
		}
	}
	if len(unresolved) == 0 {
		return ""
	}
	found := false
	for _, m := range unresolved {
		found = found || strings.Contains(msg, "unresolved dependency: "+m)
	}
	if !found {
		return fmt.Sprintf("the error names none of the unresolved modules %v", unresolved)
	}
	if notFound && strings.Contains(msg, " not found") {
		for i := range c.repos {
			if name := fmt.Sprintf("repo-%d", i+1); !strings.Contains(msg, name) {
				return "the not-found error does not list the repository " + name
			}
		}
	}
	return ""
}

func parityDir(t *testing.T) string {
	d, err := filepath.Abs(filepath.Join("..", "testdata", "parity"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestParity runs the committed cases of testdata/parity (self-contained).
func TestParity(t *testing.T) {
	d := parityDir(t)
	runParity(t, loadParityCases(t, filepath.Join(d, "cases"), map[string]string{"PARITY": d}))
}

// TestParityIvyVersions runs testdata/parity/ivyversions: each case has
// the real Ivy's answer per version, NAME@VERSION.expected (the oracle of
// ../shared/oracle with IVY_JAR set to Debian's 2.5.1 and to Maven
// Central's 2.5.3 and 2.6.0 jars), and is resolved with that
// Request.IvyVersion. The ivy1654-* cases are the ones where 2.5.x and
// 2.6.0 differ (IVY-1654: dependencyManagement matched by type and
// classifier), except ivy1654-same, where they agree.
func TestParityIvyVersions(t *testing.T) {
	d := parityDir(t)
	dir := filepath.Join(d, "ivyversions")
	var cases []parityCase
	for _, c := range loadParityCases(t, dir, map[string]string{"PARITY": d}) {
		n := 0
		for _, v := range KnownIvyVersions {
			b, err := os.ReadFile(filepath.Join(dir, c.name+"@"+v+".expected"))
			if err != nil {
				t.Fatalf("case %s: %v (every case has an answer per Ivy version)", c.name, err)
			}
			vc := c
			vc.name, vc.ivy = c.name+"@"+v, v
			vc.setExpected(strings.TrimSpace(string(b)))
			cases = append(cases, vc)
			n++
		}
	}
	runParity(t, cases)
	// The cases show a difference: 2.5.3 and 2.6.0 disagree on all but one.
	answers := map[string]map[string]string{}
	for _, c := range cases {
		name, v, _ := strings.Cut(c.name, "@")
		if answers[name] == nil {
			answers[name] = map[string]string{}
		}
		answers[name][v] = strings.Join(c.expectJars, " ")
	}
	for name, a := range answers {
		if same := a[Ivy253] == a[Ivy260]; same != (name == "ivy1654-same") {
			t.Errorf("%s: 2.5.3 and 2.6.0 answers alike = %v", name, same)
		}
	}
}

// TestParityCorpus runs ../shared/corpus/cases (skipped when ../shared is absent).
func TestParityCorpus(t *testing.T) {
	root, _ := filepath.Abs("..")
	shared := testenv.SharedDir(t, root)
	corpus := filepath.Join(shared, "corpus")
	runParity(t, loadParityCases(t, filepath.Join(corpus, "cases"), map[string]string{"CORPUS": corpus}))
}

// TestNearestCorpus compares --conflict nearest with the Maven oracle's
// output (NAME.maven, from ../shared/oracle/run-maven-oracle.sh) on the
// corpus cases. Cases where Maven went on past an invalid or missing POM
// (its "warning" lines), which Ivy and prebake treat as errors, must fail
// in prebake too.
func TestNearestCorpus(t *testing.T) {
	root, _ := filepath.Abs("..")
	shared := testenv.SharedDir(t, root)
	corpus := filepath.Join(shared, "corpus")
	dir := filepath.Join(corpus, "cases")
	cases := loadParityCases(t, dir, map[string]string{"CORPUS": corpus})
	n := 0
	for _, c := range cases {
		raw, err := os.ReadFile(filepath.Join(dir, c.name+".maven"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(c.name, func(t *testing.T) {
			var want []string
			warned, failed := false, false
			for _, l := range strings.Split(string(raw), "\n") {
				switch {
				case strings.HasPrefix(l, "jar "):
					want = append(want, strings.TrimPrefix(l, "jar "))
				case strings.HasPrefix(l, "warning "):
					warned = true
				case strings.HasPrefix(l, "error "):
					failed = true
				}
			}
			sort.Strings(want)
			src, err := newFSSource(t, c.repos)
			if err != nil {
				t.Fatal(err)
			}
			req := Request{Packages: []string{c.coords}, Conflict: ConflictNearest}
			if c.exclude != "" {
				req.Excludes = []string{c.exclude}
			}
			g, err := BuildGraph(context.Background(), req, src, nil)
			if err == nil {
				for _, a := range g.Artifacts {
					if _, aerr := src.Artifact(context.Background(), a); aerr != nil {
						err = aerr // Ivy's retrieve fails too
						break
					}
				}
			}
			if err != nil && (failed || warned) && c.expectErr {
				return // Maven could not resolve it cleanly, nor could Ivy: prebake fails like Ivy
			}
			if failed && !c.expectErr {
				// Maven fails where Ivy does not (e.g. a module without its
				// jar): prebake follows Ivy, so nearest gives the oracle's
				// set (these cases have no version conflict).
				want = c.expectJars
			}
			if err != nil {
				t.Fatalf("resolution failed: %v\nmaven:\n%s", err, raw)
			}
			var got []string
			for _, a := range g.Artifacts {
				got = append(got, repo.SparkFileName(a.Group, a.Artifact, a.Version, a.Classifier, a.Ext))
			}
			sort.Strings(got)
			if warned {
				// Maven drops the dependencies of a POM it finds invalid
				// (stricter model validation than Ivy's PomReader); each
				// jar it retrieved must still be in prebake's set.
				for _, w := range want {
					if !slices.Contains(got, w) {
						t.Errorf("Maven (which warned: %s) retrieved %s, prebake did not: %v", strings.TrimSpace(string(raw)), w, got)
					}
				}
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("jars differ from Maven (-maven +prebake):\n%s", diff)
			}
		})
	}
	if n == 0 {
		t.Fatal("no .maven files in " + dir)
	}
}

// TestDynamicRevisionLock: a dynamic revision on the command line and in a
// POM is locked, coordinate and file, at the revision it resolved to (the
// directory listing for org.range:lib-d, maven-metadata.xml for lib-m).
func TestDynamicRevisionLock(t *testing.T) {
	repo := "file://" + filepath.Join(parityDir(t), "repos", "synth") + "/"
	dir := t.TempDir()
	req := Request{Packages: []string{"org.range:lib-d:1.+,org.range:app-range:1.0"}, Repositories: []string{repo},
		NoDefaultRepositories: true, LockPath: filepath.Join(dir, "prebake.lock"), CacheDir: filepath.Join(dir, "cache")}
	res, err := Resolve(context.Background(), req, fastOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range res.Lock.Artifacts {
		got = append(got, a.Coord+" "+a.File)
	}
	want := []string{
		"org.range:app-range:1.0 org.range_app-range-1.0.jar",
		"org.range:lib-d:1.10 org.range_lib-d-1.10.jar",
		"org.range:lib-m:1.5 org.range_lib-m-1.5.jar",
	}
	sort.Strings(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lock artifacts (-want +got):\n%s", d)
	}
	if !slices.Equal(res.Lock.Inputs.Packages, []string{"org.range:lib-d:1.+", "org.range:app-range:1.0"}) {
		t.Errorf("lock inputs: %v", res.Lock.Inputs.Packages)
	}
}
