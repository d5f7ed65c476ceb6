package resolver

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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
		c := parityCase{name: name, dir: dir, coords: read(".coords"), exclude: read(".exclude"), expectedRaw: read(".expected")}
		for _, r := range strings.Split(read(".repos"), "\n") {
			if r = strings.TrimSpace(r); r != "" {
				for k, v := range vars {
					r = strings.ReplaceAll(r, "${"+k+"}", v)
				}
				c.repos = append(c.repos, r)
			}
		}
		for _, l := range strings.Split(c.expectedRaw, "\n") {
			switch {
			case strings.HasPrefix(l, "jar "):
				c.expectJars = append(c.expectJars, strings.TrimPrefix(l, "jar "))
			case strings.HasPrefix(l, "error "):
				c.expectErr = true
			}
		}
		out = append(out, c)
	}
	return out
}

// resolveWithFS builds the graph through the test file-system Source and
// checks every artifact exists (Ivy's retrieve), returning Spark's names.
func resolveWithFS(ctx context.Context, c parityCase) ([]string, error) {
	src, err := newFSSource(c.repos)
	if err != nil {
		return nil, err
	}
	req := Request{Packages: []string{c.coords}}
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
		names = append(names, SparkFileName(a.Group, a.Artifact, a.Version, a.Classifier, a.Ext))
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
			names, err := resolveWithFS(context.Background(), c)
			if c.expectErr {
				if err == nil {
					t.Fatalf("oracle failed (%s) but resolution succeeded with %v", c.expectedRaw, names)
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

// TestParityCorpus runs ../shared/corpus/cases (skipped when ../shared is absent).
func TestParityCorpus(t *testing.T) {
	root, _ := filepath.Abs("..")
	shared := testenv.SharedDir(t, root)
	corpus := filepath.Join(shared, "corpus")
	runParity(t, loadParityCases(t, filepath.Join(corpus, "cases"), map[string]string{"CORPUS": corpus}))
}
