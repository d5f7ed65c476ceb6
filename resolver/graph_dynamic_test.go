package resolver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeRepo writes a Maven-layout repository: files maps a path under
// org/dyn/ to its content.
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, "org", "dyn", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return "file://" + dir + "/"
}

func dynMeta(vs ...string) string {
	return "<metadata><versioning><versions><version>" + strings.Join(vs, "</version><version>") + "</version></versions></versioning></metadata>"
}

func dynPOM(a, v string, deps ...string) string {
	s := "<project><modelVersion>4.0.0</modelVersion><groupId>org.dyn</groupId><artifactId>" + a + "</artifactId><version>" + v + "</version><dependencies>"
	for _, d := range deps {
		s += "<dependency><groupId>org.dyn</groupId><artifactId>" + d + "</artifactId><version>1.0</version></dependency>"
	}
	return s + "</dependencies></project>"
}

// TestDynamicPerRepository: each repository picks its best among the
// versions it lists whose POM it has, the latest wins (a tie keeps the
// earlier repository), and the module loads from the winner.
func TestDynamicPerRepository(t *testing.T) {
	tests := []struct {
		name         string
		repo1, repo2 map[string]string
		want         []string // artifact "a:v@repo"
	}{{
		name: "listed-without-pom-loses",
		// repo1 lists 3.0 without its POM and has an unlisted 2.0 POM
		// (with a dependency); repo2 lists 2.0: repo2's 2.0 wins over
		// repo1's 1.0, and loads from repo2 (no dependency).
		repo1: map[string]string{
			"lib/maven-metadata.xml": dynMeta("1.0", "3.0"),
			"lib/1.0/lib-1.0.pom":    dynPOM("lib", "1.0"), "lib/1.0/lib-1.0.jar": "j",
			"lib/2.0/lib-2.0.pom": dynPOM("lib", "2.0", "dep"), "lib/2.0/lib-2.0.jar": "j",
			"dep/1.0/dep-1.0.pom": dynPOM("dep", "1.0"), "dep/1.0/dep-1.0.jar": "j",
		},
		repo2: map[string]string{
			"lib/maven-metadata.xml": dynMeta("2.0"),
			"lib/2.0/lib-2.0.pom":    dynPOM("lib", "2.0"), "lib/2.0/lib-2.0.jar": "j",
		},
		want: []string{"lib:2.0@repo-2"},
	}, {
		name: "tie-keeps-first",
		repo1: map[string]string{
			"lib/maven-metadata.xml": dynMeta("1.0", "2.0"),
			"lib/2.0/lib-2.0.pom":    dynPOM("lib", "2.0", "dep"), "lib/2.0/lib-2.0.jar": "j",
			"dep/1.0/dep-1.0.pom": dynPOM("dep", "1.0"), "dep/1.0/dep-1.0.jar": "j",
		},
		repo2: map[string]string{
			"lib/maven-metadata.xml": dynMeta("2.0"),
			"lib/2.0/lib-2.0.pom":    dynPOM("lib", "2.0"), "lib/2.0/lib-2.0.jar": "j",
		},
		want: []string{"dep:1.0@repo-1", "lib:2.0@repo-1"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := newFSSource(t, []string{writeRepo(t, tc.repo1), writeRepo(t, tc.repo2)})
			if err != nil {
				t.Fatal(err)
			}
			g, err := BuildGraph(context.Background(), Request{Packages: []string{"org.dyn:lib:latest.integration"}}, src, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range g.Artifacts {
				got = append(got, a.Artifact+":"+a.Version+"@"+a.Repo.Name)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("artifacts (-want +got):\n%s", d)
			}
		})
	}
}
