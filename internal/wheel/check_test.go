package wheel

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/prebake/prebake/errdefs"
)

// TestCheck: a good wheel checks, writing nothing; CheckFile refuses a
// FIFO before opening it (no hang) and names a missing file NotFound.
// The refusals are TestInstallRefuses's (it runs Check on every case).
func TestCheck(t *testing.T) {
	data := wheelOf(t, pureFiles())
	if err := Check(context.Background(), bytes.NewReader(data), int64(len(data)), file); err != nil {
		t.Fatalf("Check = %v", err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckFile(context.Background(), p); err != nil {
		t.Fatalf("CheckFile = %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("Check wrote: %v", left)
	}
	fifo := filepath.Join(dir, "fifo-1.0-py3-none-any.whl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if err := CheckFile(context.Background(), fifo); !errors.Is(err, errdefs.Invalid) {
		t.Errorf("CheckFile(FIFO) = %v, want Invalid", err)
	}
	if err := CheckFile(context.Background(), filepath.Join(dir, "gone-1.0-py3-none-any.whl")); !errors.Is(err, errdefs.NotFound) {
		t.Errorf("CheckFile(missing) = %v, want NotFound", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Check(ctx, bytes.NewReader(data), int64(len(data)), file); !errors.Is(err, context.Canceled) {
		t.Errorf("Check(cancelled) = %v", err)
	}
}
