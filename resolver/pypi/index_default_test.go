package pypi

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPipDefaultMemo: the machine's pip is asked once; the next load takes
// the remembered answer while python3 is the same file, and asks again when
// python3 changed, when the memo is another python3's or malformed, and
// when no cache directory is given.
func TestPipDefaultMemo(t *testing.T) {
	root, bin, cacheDir := t.TempDir(), t.TempDir(), t.TempDir()
	py := filepath.Join(bin, "python3")
	if err := os.WriteFile(py, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := WithConfigEnv(func(k string) (string, bool) {
		if k == "PATH" {
			return bin, true
		}
		return "", false
	})
	roots := WithConfigRoots(filepath.Join(root, "home"), filepath.Join(root, "etc"))
	asked := 0
	ask := WithPipDefault(func(context.Context) (string, error) { asked++; return "https://pips-default.example/simple", nil })
	load := func(memo string) {
		t.Helper()
		got, err := LoadIndexConfig(context.Background(), env, roots, ask, WithPipDefaultMemo(memo))
		if err != nil || got.IndexURL != "https://pips-default.example/simple" || !got.Default {
			t.Fatalf("got %+v, %v", got, err)
		}
	}
	steps := []struct {
		name   string
		before func()
		memo   string
		asked  int
	}{
		{"first", nil, cacheDir, 1},
		{"remembered", nil, cacheDir, 1},
		{"no memo dir", nil, "", 2},
		{"python3 changed", func() {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(py, later, later); err != nil {
				t.Fatal(err)
			}
		}, cacheDir, 3},
		{"remembered again", nil, cacheDir, 3},
		{"malformed memo", func() {
			if err := os.WriteFile(filepath.Join(cacheDir, "python", pipDefaultMemoFile), []byte("v1\nother python3\nhttps://evil.example/\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, cacheDir, 4},
		{"rewritten", nil, cacheDir, 4},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		load(s.memo)
		if asked != s.asked {
			t.Fatalf("%s: pip asked %d times, want %d", s.name, asked, s.asked)
		}
	}
}
