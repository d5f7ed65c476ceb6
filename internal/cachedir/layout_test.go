package cachedir

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLayout: the paths of a user's cache, each under its root, and a key
// that is not a sha256 digest (hostile: a tampered index entry, a
// malformed lock) names NoDigest in its directory, never a path outside.
func TestLayout(t *testing.T) {
	root := t.TempDir()
	l := At(root)
	sum := strings.Repeat("ab", 32)
	j := func(parts ...string) string { return filepath.Join(append([]string{root}, parts...)...) }
	got := map[string]string{
		"root":          l.Root(),
		"blob":          l.Blob(sum),
		"blob upper":    l.Blob(strings.ToUpper(sum)),
		"index":         l.Dir(DirIndex),
		"stamps":        l.Stamps(1000),
		"signature":     l.Signature(sum),
		"retrieve":      l.Dir(DirRetrieve),
		"rewrite":       l.Dir(DirRewrite),
		"layer blobs":   l.Dir(DirLayerBlobs),
		"pip memo":      l.Dir(DirPython),
		"site-packages": l.SitePackages(sum),
		"archive":       l.PythonArchive(sum),
	}
	want := map[string]string{
		"root":          root,
		"blob":          j("blobs", "sha256", sum),
		"blob upper":    j("blobs", "sha256", strings.ToUpper(sum)),
		"index":         j("index"),
		"stamps":        j("stamps", "1000"),
		"signature":     j("signatures", "sha256", sum+".asc"),
		"retrieve":      j("retrieve"),
		"rewrite":       j("rewrite"),
		"layer blobs":   j("layers", "blobs", "sha256"),
		"pip memo":      j("python"),
		"site-packages": j("python", "site-packages", sum),
		"archive":       j("python", "archives", sum),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layout (-want +got):\n%s", diff)
	}

	hostile := []string{"", "..", ".", "/etc/passwd", "../../../../../../../../../../../../../../../../../../../etc/passwd",
		strings.Repeat("../", 21) + "x", strings.Repeat("a", 63) + "/", strings.Repeat("g", 64), strings.Repeat("a", 65), sum[:62] + "\x00a"}
	for _, key := range hostile {
		for name, p := range map[string]string{
			"blob":          l.Blob(key),
			"signature":     l.Signature(key),
			"site-packages": l.SitePackages(key),
			"archive":       l.PythonArchive(key),
		} {
			if base := strings.TrimSuffix(filepath.Base(p), ".asc"); base != NoDigest {
				t.Errorf("%s of %q: %s, want %s in its directory", name, key, p, NoDigest)
			}
			if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
				t.Errorf("%s of %q: %s is outside %s", name, key, p, root)
			}
		}
	}
}
