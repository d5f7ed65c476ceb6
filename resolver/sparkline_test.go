package resolver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
			if d := cmp.Diff(tc.want, lockFiles(res.Lock)); d != "" {
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

// TestEffectiveIvy: the Ivy a request follows and what its lock records.
// The default (the Spark line's Ivy) keeps every existing lock's bytes and
// inputsHash: a 4.x lock records no Ivy, a 3.4 lock "2.5.1", whether the
// version is chosen or defaulted.
func TestEffectiveIvy(t *testing.T) {
	for _, tc := range []struct {
		spark, ivy   string
		want, inLock string
		bad          bool
	}{
		{spark: "", ivy: "", want: Ivy253, inLock: ""},
		{spark: "4.3.0", ivy: "", want: Ivy253, inLock: ""},
		{spark: "4.3.0", ivy: "2.5.3", want: Ivy253, inLock: ""},
		{spark: "4.3.0", ivy: "2.6.0", want: Ivy260, inLock: "2.6.0"},
		{spark: "4.3.0", ivy: "2.5.1", want: Ivy251, inLock: "2.5.1"},
		{spark: "3.4.4", ivy: "", want: Ivy251, inLock: "2.5.1"},
		{spark: "3.4.4", ivy: "2.5.1", want: Ivy251, inLock: "2.5.1"},
		{spark: "3.4.4", ivy: "2.5.3", want: Ivy253, inLock: ""},
		{spark: "3.5.0", ivy: "2.6.0", want: Ivy260, inLock: "2.6.0"},
		{spark: "", ivy: "2.6.0", want: Ivy260, inLock: "2.6.0"},
		{spark: "4.3.0", ivy: "2.7.0", bad: true},
		{spark: "4.3.0", ivy: "2.5.2", bad: true},
		{spark: "4.3.0", ivy: "2.6", bad: true},
		{spark: "4.3.0", ivy: "2.6.0\n", bad: true},
		{spark: "3.5", ivy: "2.6.0", bad: true},
	} {
		t.Run(tc.spark+"/"+tc.ivy, func(t *testing.T) {
			got, err := EffectiveIvy(tc.spark, tc.ivy)
			if tc.bad {
				if !errors.Is(err, errdefs.BadArgument) {
					t.Fatalf("EffectiveIvy(%q, %q) = %q, %v; want a BadArgument error", tc.spark, tc.ivy, got, err)
				}
				if tc.spark != "3.5" && (!errors.Is(err, ErrUnknownIvyVersion) || !strings.Contains(err.Error(), "2.5.1, 2.5.3, 2.6.0")) {
					t.Errorf("error %q: want ErrUnknownIvyVersion naming the versions known", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("EffectiveIvy(%q, %q) = %q, %v; want %q", tc.spark, tc.ivy, got, err, tc.want)
			}
			in := canonicalInputs(Request{Packages: []string{"g:a:1"}, SparkVersion: tc.spark, IvyVersion: tc.ivy}, nil)
			if in.Ivy != tc.inLock {
				t.Errorf("lock inputs ivy = %q, want %q", in.Ivy, tc.inLock)
			}
			// Hashed only when recorded: the same as the request that
			// leaves the choice to the line whose Ivy it records.
			line := map[string]string{"": "4.3.0", Ivy251: "3.4.4", Ivy260: "4.3.0"}[tc.inLock]
			def := canonicalInputs(Request{Packages: []string{"g:a:1"}, SparkVersion: line}, nil)
			if same := def.InputsHash == in.InputsHash; same != (tc.inLock != Ivy260) {
				t.Errorf("inputsHash equal to Spark %s's default = %v", line, same)
			}
		})
	}
}
