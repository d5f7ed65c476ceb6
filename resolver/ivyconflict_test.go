package resolver

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/lock"
)

// TestIvySettingsNearest: <settings defaultConflictManager="nearest"> (Ivy
// 2.6.0's, IVY-813) is accepted under --ivy-version 2.6.0 and resolves as
// Spark does, with latest-revision, and is refused under Ivy 2.5 naming the
// file and line. app:1 depends on c:1 (→ b:1) and d:1 (→ e:1 → b:2):
// latest-revision takes b:2, nearest b:1. The answers are the real
// spark-submit's (test/parity's TestIvySparkSubmitLive: pyspark 4.3.0 with
// Ivy 2.6.0's jar takes b:2 with either manager, testdata/parity/spark/
// nearest@2.6.0.golden, although Ivy 2.6.0's own command line, java -jar
// ivy-2.6.0.jar -settings … -dependency n app 1, takes b:1); Spark with Ivy
// 2.5.x refuses the file ("unknown conflict manager nearest").
func TestIvySettingsNearest(t *testing.T) {
	pom := func(a, deps string) string {
		return `<project><modelVersion>4.0.0</modelVersion><groupId>n</groupId><artifactId>` + a[:strings.Index(a, ":")] +
			`</artifactId><version>` + a[strings.Index(a, ":")+1:] + `</version><dependencies>` + deps + `</dependencies></project>`
	}
	dep := func(a, v string) string {
		return `<dependency><groupId>n</groupId><artifactId>` + a + `</artifactId><version>` + v + `</version></dependency>`
	}
	files := map[string]string{
		"repo/n/app/1/app-1.pom": pom("app:1", dep("c", "1")+dep("d", "1")),
		"repo/n/c/1/c-1.pom":     pom("c:1", dep("b", "1")),
		"repo/n/d/1/d-1.pom":     pom("d:1", dep("e", "1")),
		"repo/n/e/1/e-1.pom":     pom("e:1", dep("b", "2")),
		"repo/n/b/1/b-1.pom":     pom("b:1", ""),
		"repo/n/b/2/b-2.pom":     pom("b:2", ""),
	}
	for _, j := range []string{"app/1/app-1", "c/1/c-1", "d/1/d-1", "e/1/e-1", "b/1/b-1", "b/2/b-2"} {
		files["repo/n/"+j+".jar"] = j
	}
	dir := m2test.WriteFiles(t, files)
	settings := func(cm string) string {
		return "<ivysettings>\n<settings defaultResolver=\"r\"\n  defaultConflictManager=\"" + cm + "\"/>\n" +
			`<resolvers><ibiblio name="r" root="file://` + filepath.ToSlash(dir) + `/repo/" m2compatible="true"/></resolvers></ivysettings>`
	}
	for _, tc := range []struct {
		name, cm, spark, ivy string
		want                 []string
		conflict             Conflict
		kind                 errdefs.Kind
	}{
		{name: "nearest under 2.6.0", cm: "nearest", ivy: "2.6.0", want: []string{"n_app-1.jar", "n_b-2.jar", "n_c-1.jar", "n_d-1.jar", "n_e-1.jar"}, conflict: ConflictLatest},
		{name: "latest-revision under 2.6.0", cm: "latest-revision", ivy: "2.6.0", want: []string{"n_app-1.jar", "n_b-2.jar", "n_c-1.jar", "n_d-1.jar", "n_e-1.jar"}, conflict: ConflictLatest},
		{name: "nearest under the line's 2.5.3", cm: "nearest", spark: "4.3.0", kind: errdefs.BadArgument},
		{name: "nearest under 2.5.1", cm: "nearest", spark: "3.4.4", kind: errdefs.BadArgument},
		{name: "unknown manager", cm: "strict", ivy: "2.6.0", kind: errdefs.Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := m2test.WriteFiles(t, map[string]string{"ivysettings.xml": settings(tc.cm)})
			path := filepath.Join(d, "ivysettings.xml")
			req := Request{Packages: []string{"n:app:1"}, IvySettings: path, SparkVersion: tc.spark, IvyVersion: tc.ivy,
				CacheDir: filepath.Join(d, "cache"), Home: d, Conflict: ConflictLatest}
			res, err := Resolve(context.Background(), req)
			if tc.kind != errdefs.Unknown {
				if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), path) {
					t.Fatalf("Resolve: %v, want a %v error naming %s", err, tc.kind, path)
				}
				if tc.kind == errdefs.BadArgument && (!strings.Contains(err.Error(), ":3") || !strings.Contains(err.Error(), "2.6.0")) {
					t.Errorf("error %q: want the line (3) and Ivy 2.6.0 named", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, lockFiles(res.Lock)); d != "" {
				t.Errorf("jars (-want +got):\n%s", d)
			}
			if res.Lock.Inputs.Conflict != tc.conflict || res.Lock.Inputs.Ivy != "2.6.0" {
				t.Errorf("lock inputs conflict %q ivy %q, want %q, 2.6.0", res.Lock.Inputs.Conflict, res.Lock.Inputs.Ivy, tc.conflict)
			}
		})
	}
}

// lockFiles are the file names of l's artifacts, sorted.
func lockFiles(l *lock.File) []string {
	var out []string
	for _, a := range l.Artifacts {
		out = append(out, a.File)
	}
	sort.Strings(out)
	return out
}
