package resolver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

func TestIvyOf(t *testing.T) {
	for _, tc := range []struct {
		spark, want string
		bad         bool
	}{
		{"", "", false},
		{"3.4.4", Ivy251, false},
		{"3.3.4", Ivy251, false},
		{"3.5.0", Ivy251, false},
		{"3.5.8", Ivy251, false},
		{"3.5.9", "", false},
		{"3.5.10", "", false},
		{"4.0.0-preview2", "", false},
		{"4.3.0", "", false},
		{"4.1", "", false},
		{"3.5", "", true},
		{"x", "", true},
		{"3", "", true},
		{"-1.2.3", "", true},
	} {
		t.Run(tc.spark, func(t *testing.T) {
			got, err := IvyOf(tc.spark)
			if tc.bad {
				if !errors.Is(err, errdefs.BadArgument) {
					t.Fatalf("IvyOf(%q) = %q, %v; want a BadArgument error", tc.spark, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("IvyOf(%q) = %q, %v; want %q", tc.spark, got, err, tc.want)
			}
		})
	}
}

// TestIvy1642 reproduces the real spark-submit on net.sf.saxon:Saxon-HE:12.4
// (testdata/central/cases/ivy1642-saxon@*.golden): its POM depends on
// org.xmlresolver:xmlresolver:5.2.2 and on the same with classifier data.
// Spark 3.5.0 (Ivy 2.5.1) retrieves only the data jar, 3.5.9 (Ivy 2.5.3) both;
// the lock of the 2.5.1 line records its Ivy.
func TestIvy1642(t *testing.T) {
	repo := t.TempDir()
	writePOM := func(g, a, v, body string) {
		dir := filepath.Join(repo, filepath.FromSlash(g), a, v)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		pom := `<project><modelVersion>4.0.0</modelVersion><groupId>` + g + `</groupId><artifactId>` + a + `</artifactId><version>` + v + `</version>` + body + `</project>`
		if err := os.WriteFile(filepath.Join(dir, a+"-"+v+".pom"), []byte(pom), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, j := range []string{a + "-" + v + ".jar", a + "-" + v + "-data.jar"} {
			if err := os.WriteFile(filepath.Join(dir, j), []byte(j), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	writePOM("s", "saxon", "1", `<dependencies>
<dependency><groupId>x</groupId><artifactId>xmlresolver</artifactId><version>2</version></dependency>
<dependency><groupId>x</groupId><artifactId>xmlresolver</artifactId><version>2</version><classifier>data</classifier></dependency>
</dependencies>`)
	writePOM("x", "xmlresolver", "2", "")
	for _, tc := range []struct {
		spark, ivy string
		want       []string
	}{
		{"3.5.0", Ivy251, []string{"s_saxon-1.jar", "x_xmlresolver-2-data.jar"}},
		{"3.4.4", Ivy251, []string{"s_saxon-1.jar", "x_xmlresolver-2-data.jar"}},
		{"3.5.9", "", []string{"s_saxon-1.jar", "x_xmlresolver-2-data.jar", "x_xmlresolver-2.jar"}},
		{"", "", []string{"s_saxon-1.jar", "x_xmlresolver-2-data.jar", "x_xmlresolver-2.jar"}},
	} {
		t.Run("spark "+tc.spark, func(t *testing.T) {
			req := Request{Packages: []string{"s:saxon:1"}, Repositories: []string{"file://" + filepath.ToSlash(repo) + "/"},
				NoDefaultRepositories: true, CacheDir: t.TempDir(), SparkVersion: tc.spark,
				LockPath: filepath.Join(t.TempDir(), "prebake.lock")}
			res, err := Resolve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range res.Lock.Artifacts {
				got = append(got, a.File)
			}
			sort.Strings(got)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("jars (-want +got):\n%s", d)
			}
			if res.Lock.Inputs.Ivy != tc.ivy {
				t.Errorf("lock inputs ivy = %q, want %q", res.Lock.Inputs.Ivy, tc.ivy)
			}
			// The other line's request does not take this lock.
			other := req
			other.SparkVersion = map[string]string{Ivy251: "3.5.9", "": "3.5.0"}[tc.ivy]
			if h := canonicalInputs(other, nil).InputsHash; h == canonicalInputs(req, nil).InputsHash {
				t.Errorf("Spark %s and %s hash their inputs alike", tc.spark, other.SparkVersion)
			}
		})
	}
	_, err := Resolve(context.Background(), Request{Packages: []string{"s:saxon:1"}, SparkVersion: "3.5", CacheDir: t.TempDir()})
	if !errors.Is(err, errdefs.BadArgument) {
		t.Fatalf("SparkVersion 3.5: %v, want a BadArgument error", err)
	}
}
