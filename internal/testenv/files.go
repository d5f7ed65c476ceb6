package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes s to path (mode 0600), making its directory (0700);
// it fails the test on an error.
func WriteFile(t testing.TB, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
