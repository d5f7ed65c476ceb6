package layers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
)

// TestHostileJarNames: finding 1b. A jar whose name climbs out of the jars
// directory (the review's tar entry that replaced
// /opt/spark/jars/spark-core_2.12-3.5.0.jar) is refused with 65 by Bake
// (the lock check) and, behind it, by the layer builder itself.
func TestHostileJarNames(t *testing.T) {
	dir := t.TempDir()
	jar := filepath.Join(dir, "evil.jar")
	if err := os.WriteFile(jar, []byte("MALICIOUS spark-core replacement"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"../../../../../../../../../../../../opt/spark/jars/spark-core_2.12-3.5.0.jar",
		"..",
		"a\x00b.jar",
		`..\..\x.jar`,
	} {
		_, err := buildJarLayers(context.Background(), []bakeJar{{file: name, path: jar, sha256: "x"}}, DefaultJarsDir, DefaultEpoch, testOptions(t), 1)
		if errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("layer of %q: err = %v, want invalid input", name, err)
		}
		lf := &lock.File{Artifacts: []lock.Artifact{{Coord: "ev:x:1", File: name, Sha256: strings.Repeat("0", 64), Size: 32}}}
		_, err = Bake(context.Background(), BakeInput{Lock: lf, Jars: lock.LocalJars([]string{jar}), Base: "oci:../testdata/base-image:3.5.0-amd64", Target: "oci:" + filepath.Join(dir, "img")})
		if errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("Bake %q: err = %v, want invalid input", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "img")); err == nil {
			t.Errorf("Bake %q wrote the target", name)
		}
	}
}
