package s3store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
)

// TestHostileStoreKeys: findings 1c and 1d. A jar name that climbs out of
// jars/sha256/<hex>/ never becomes a key (S3) or a file (file://): Bake
// refuses the lock, a manifest holding one is refused, and the key and
// file layers refuse it on their own.
func TestHostileStoreKeys(t *testing.T) {
	sandbox := t.TempDir()
	root := filepath.Join(sandbox, "store")
	s, err := Open(context.Background(), "file://"+root+"/prefix")
	if err != nil {
		t.Fatal(err)
	}
	jar := filepath.Join(sandbox, "x.jar")
	os.WriteFile(jar, []byte("jar"), 0o644)
	sum := strings.Repeat("ab", 32)
	for _, name := range []string{"../../../../../../PWNED_art-1.jar", "..", "a\x00b.jar"} {
		lf := &lock.File{Artifacts: []lock.Artifact{{Coord: "ev:art:1", File: name, Sha256: sum, Size: 3}}}
		if _, err := s.Bake(context.Background(), lf, lock.LocalJars([]string{jar})); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("Bake %q: err = %v, want invalid input", name, err)
		}
		j := ManifestJar{Coord: "ev:art:1", File: name, Path: JarPath(sum, name), Sha256: sum, Size: 3}
		if _, err := s.jarKey(j); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("jarKey %q: err = %v, want invalid input", name, err)
		}
		if _, err := s.putJar(context.Background(), j, jar); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("putJar %q: err = %v, want invalid input", name, err)
		}
		m := &Manifest{Jars: []ManifestJar{j}, Version: ManifestVersion}
		data, _ := m.Marshal()
		if _, err := ParseManifest("test", data); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("manifest with %q: err = %v, want invalid input", name, err)
		}
	}
	b := newFileBackend(root)
	if err := b.write(context.Background(), "prefix/jars/sha256/ab/../../../../../PWNED.jar", strings.NewReader("x")); errdefs.KindOf(err) != errdefs.Invalid {
		t.Errorf("file backend write outside its root: err = %v, want invalid input", err)
	}
	ents, _ := os.ReadDir(sandbox)
	if len(ents) != 1 { // x.jar only: no store dir, no PWNED file
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("sandbox holds %v", names)
	}
}
