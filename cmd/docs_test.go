package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/internal/clidocs"
	"github.com/prebake/prebake/internal/jsondoc"
)

// TestDocsCurrent regenerates the command reference and the man pages from
// the cobra commands, and the JSON schemas from JSONDocs, and compares them
// with docs/reference, docs/man and docs/schemas: a flag, command or result
// type changed without `make docs` fails here.
func TestDocsCurrent(t *testing.T) {
	got := t.TempDir()
	if err := clidocs.Generate(NewRoot(), got); err != nil {
		t.Fatal(err)
	}
	if err := jsondoc.WriteSchemas(got, JSONDocs(), JSONSchema); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"reference", "man", jsondoc.SchemaDir} {
		want, have := readTree(t, filepath.Join("..", "docs", sub)), readTree(t, filepath.Join(got, sub))
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("docs/%s is stale: run make docs (-committed +generated):\n%s", sub, diff)
		}
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}
