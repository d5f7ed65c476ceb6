package repo

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindM2POMOnly: a module with its POM and no jar is listed; one with
// its jar, a parent (packaging pom) and a non-POM file are not; the scan is
// bounded.
func TestFindM2POMOnly(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repository")
	put := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("org/apache/hadoop/hadoop-azure/3.3.4/hadoop-azure-3.3.4.pom", `<project><artifactId>hadoop-azure</artifactId><packaging>jar</packaging></project>`)
	put("org/slf4j/slf4j-api/1.7.36/slf4j-api-1.7.36.pom", `<project><artifactId>slf4j-api</artifactId></project>`)
	put("org/slf4j/slf4j-api/1.7.36/slf4j-api-1.7.36.jar", "PK")
	put("org/slf4j/slf4j-parent/1.7.36/slf4j-parent-1.7.36.pom", `<project><artifactId>slf4j-parent</artifactId><packaging>pom</packaging></project>`)
	put("com/example/junk/1.0/junk-1.0.pom", "not xml at all")

	got, truncated, err := FindM2POMOnly(context.Background(), root, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []M2Entry{{Module: "org.apache.hadoop:hadoop-azure:3.3.4", Dir: filepath.Join(root, "org/apache/hadoop/hadoop-azure/3.3.4")}}
	if diff := cmp.Diff(want, got); diff != "" || truncated {
		t.Errorf("truncated %v, entries (-want +got):\n%s", truncated, diff)
	}
	if _, truncated, _ := FindM2POMOnly(context.Background(), root, 3); !truncated {
		t.Error("a scan bounded at 3 directories is not truncated")
	}
	if got, _, err := FindM2POMOnly(context.Background(), filepath.Join(root, "none"), 0); err != nil || len(got) != 0 {
		t.Errorf("missing root: %v, %v", got, err)
	}
}
