package resolver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	blobcache "github.com/prebake/prebake/resolver/cache"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

// TestStage: a staged blob of the wrong sha256 or size is refused (bad
// input) and leaves no temp file; Abort removes what was staged; Commit
// puts the blobs where FetchLocked finds them.
func TestStage(t *testing.T) {
	data := "jar bytes"
	s := sha256.Sum256([]byte(data))
	sum := hex.EncodeToString(s[:])
	cache := t.TempDir()
	temps := func() int {
		es, _ := os.ReadDir(filepath.Join(cache, "tmp"))
		return len(es)
	}
	st, err := Stage(cache)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Kind           errdefs.Kind
		Mismatch, Size bool
		Temps          int
	}
	for _, c := range []struct {
		name, body, sum string
		size            int64
		want            outcome
	}{
		{"other bytes", "jar bytez", sum, 9, outcome{errdefs.Invalid, true, false, 0}},
		{"longer", data + "!", sum, 9, outcome{errdefs.Invalid, false, true, 0}},
		{"shorter", data[:4], sum, 9, outcome{errdefs.Invalid, false, true, 0}},
		{"good", data, sum, 9, outcome{errdefs.Unknown, false, false, 1}},
	} {
		err := st.Add("jars/x.jar", strings.NewReader(c.body), c.sum, c.size)
		got := outcome{errdefs.KindOf(err), errors.Is(err, ErrChecksumMismatch), errors.Is(err, ErrStagedSize), temps()}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s\n%v", c.name, diff, err)
		}
	}
	st.Abort()
	if n := temps(); n != 0 {
		t.Errorf("Abort left %d temp files", n)
	}
	if _, err := os.Stat(blobcache.BlobPath(cache, sum)); err == nil {
		t.Error("Abort committed a blob")
	}
	st, _ = Stage(cache)
	if err := st.Add("jars/x.jar", strings.NewReader(data), sum, 9); err != nil {
		t.Fatal(err)
	}
	paths, err := st.Commit()
	if err != nil || len(paths) != 1 || paths[0] != blobcache.BlobPath(cache, sum) {
		t.Fatalf("Commit = %v, %v", paths, err)
	}
	if err := blobcache.VerifyBlob(cache, sum, 9); err != nil {
		t.Errorf("committed blob: %v", err)
	}
	if err := st.Add("x", strings.NewReader(data), sum, 9); errdefs.KindOf(err) != errdefs.Internal {
		t.Errorf("Add after Commit: %v", err)
	}
}
