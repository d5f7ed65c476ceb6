package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/revision"
	"github.com/prebake/prebake/lock"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver/repo"
)

// fileWriter writes files (slash paths) under root, making directories.
func fileWriter(t *testing.T, root string) func(rel, data string) {
	return func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// versionsRepo is a file:// repository of org.o:app (1.0, 1.1, 2.0, and a
// 3.0-SNAPSHOT) with its maven-metadata.xml, and org.o:lib:1.0 that every
// app version depends on.
func versionsRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	put := fileWriter(t, root)
	put("org/o/lib/1.0/lib-1.0.pom", `<project><modelVersion>4.0.0</modelVersion><groupId>org.o</groupId><artifactId>lib</artifactId><version>1.0</version></project>`)
	put("org/o/lib/1.0/lib-1.0.jar", "lib jar")
	for _, v := range []string{"1.0", "1.1", "2.0"} {
		put(fmt.Sprintf("org/o/app/%s/app-%s.pom", v, v), fmt.Sprintf(`<project><modelVersion>4.0.0</modelVersion><groupId>org.o</groupId><artifactId>app</artifactId><version>%s</version>
<dependencies><dependency><groupId>org.o</groupId><artifactId>lib</artifactId><version>1.0</version></dependency></dependencies></project>`, v))
		put(fmt.Sprintf("org/o/app/%s/app-%s.jar", v, v), "app jar "+v)
	}
	put("org/o/app/maven-metadata.xml", `<?xml version="1.0" encoding="UTF-8"?>
<metadata><groupId>org.o</groupId><artifactId>app</artifactId><versioning><latest>3.0-SNAPSHOT</latest><release>2.0</release>
<versions><version>1.0</version><version>1.1</version><version>2.0</version><version>3.0-SNAPSHOT</version></versions></versioning></metadata>
`)
	return "file://" + root + "/"
}

func TestOutdatedCLI(t *testing.T) {
	_, tmp := isolatedCLI(t)
	repo := versionsRepo(t)
	lockPath := filepath.Join(tmp, "prebake.lock")
	base := []string{"--no-default-repositories", "--repositories", repo, "--cache", filepath.Join(tmp, "cache"), "--lock", lockPath}
	if _, stderr, code := runCLI(t, append([]string{"resolve"}, append(base, "org.o:app:1.0")...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, stderr)
	}
	out, stderr, code := runCLI(t, append([]string{"outdated", "-o", "json"}, base...)...)
	if code != 0 {
		t.Fatalf("outdated: exit %d\n%s", code, stderr)
	}
	var got jsondoc.Outdated
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := jsondoc.Outdated{Lock: lockPath, Packages: []jsondoc.OutdatedPackage{{Module: "org.o:app", Current: "1.0", Latest: "2.0", Newer: []string{"1.1", "2.0"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outdated -o json (-want +got):\n%s", diff)
	}
	out, _, _ = runCLI(t, append([]string{"outdated"}, base...)...)
	if !strings.Contains(out, "PACKAGE") || !strings.Contains(out, "org.o:app") || !strings.Contains(out, "1.1, 2.0") {
		t.Errorf("outdated text:\n%s", out)
	}

	lockedApp := func() string {
		lf, err := lock.Read(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range lf.Artifacts {
			if strings.HasPrefix(a.Coord, "org.o:app:") {
				return a.Coord + " " + strings.Join(lf.Inputs.Packages, " ")
			}
		}
		return ""
	}
	// --set picks a version; --write the newest.
	if _, stderr, code := runCLI(t, append([]string{"outdated", "--set", "org.o:app:1.1"}, base...)...); code != 0 {
		t.Fatalf("outdated --set: exit %d\n%s", code, stderr)
	}
	if got := lockedApp(); got != "org.o:app:1.1 org.o:app:1.1" {
		t.Errorf("after --set: %s", got)
	}
	out, stderr, code = runCLI(t, append([]string{"outdated", "--write", "-o", "json"}, base...)...)
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || !got.Written || got.LockHash == "" {
		t.Fatalf("outdated --write: exit %d\n%s%s", code, out, stderr)
	}
	if got := lockedApp(); got != "org.o:app:2.0 org.o:app:2.0" {
		t.Errorf("after --write: %s", got)
	}
	// Bad --set and no --lock: usage errors naming them.
	if _, stderr, code := runCLI(t, append([]string{"outdated", "--set", "org.o:other:1.0"}, base...)...); code != exitcode.Usage || !strings.Contains(stderr, "org.o:other") {
		t.Errorf("--set of a package not in the lock: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "outdated"); code != exitcode.Usage || !strings.Contains(stderr, "--lock") {
		t.Errorf("no --lock: exit %d\n%s", code, stderr)
	}
}

// TestOutdatedCentralIT lists newer versions of a real package on the
// machine's Maven Central: commons-lang3 3.12.0 has had newer releases
// since 2022, org.apache.spark's 3.5.0 has newer 3.5.x within its line.
func TestOutdatedCentralIT(t *testing.T) {
	testenv.RequireIT(t)
	_, tmp := isolatedCLI(t)
	central, err := repo.MavenCentralURL("", "")
	if err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(tmp, "prebake.lock")
	base := []string{"--no-default-repositories", "--repositories", central, "--cache", filepath.Join(tmp, "cache"), "--lock", lockPath}
	if _, stderr, code := runCLI(t, append([]string{"resolve"}, append(base, "org.apache.commons:commons-lang3:3.12.0")...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, stderr)
	}
	out, stderr, code := runCLI(t, append([]string{"outdated", "-o", "json"}, base...)...)
	if code != 0 {
		t.Fatalf("outdated: exit %d\n%s", code, stderr)
	}
	var got jsondoc.Outdated
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Packages) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	p := got.Packages[0]
	if p.Module != "org.apache.commons:commons-lang3" || p.Current != "3.12.0" || !strings.Contains(strings.Join(p.Newer, " "), "3.14.0") {
		t.Errorf("commons-lang3 3.12.0: %+v", p)
	}
	for _, v := range p.Newer {
		if strings.Contains(v, "SNAPSHOT") || revision.Compare(v, "3.12.0") <= 0 {
			t.Errorf("newer lists %s", v)
		}
	}
	t.Logf("commons-lang3 3.12.0: %d newer on %s, latest %s", len(p.Newer), central, p.Latest)

	// A Spark module within its line: only metadata is read, so a lock of
	// its package alone (written here, no jar resolved) is enough.
	sparkLock := filepath.Join(tmp, "spark.lock")
	if err := lock.Write(sparkLock, &lock.File{Inputs: lock.Inputs{Conflict: lock.ConflictLatest, Packages: []string{"org.apache.spark:spark-core_2.12:3.5.0"}}}); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = runCLI(t, "outdated", "-o", "json", "--within-spark-line", "--no-default-repositories", "--repositories", central, "--lock", sparkLock)
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.Packages) != 1 || len(got.Packages[0].Newer) == 0 {
		t.Fatalf("outdated spark-core: exit %d\n%s%s", code, out, stderr)
	}
	for _, v := range got.Packages[0].Newer {
		if !strings.HasPrefix(v, "3.5.") {
			t.Errorf("--within-spark-line lists %s for spark-core 3.5.0", v)
		}
	}
	t.Logf("spark-core_2.12 3.5.0 within its line: %v", got.Packages[0].Newer)
}

// sparkLineRepo is a file:// repository for the lock of review 4's
// MEDIUM 4 (spark-sql-kafka 3.5.1, hadoop-aws 3.3.4, delta-spark 3.2.0)
// with newer releases of each: Kafka 3.5.7 and 4.0.0, hadoop-aws up to
// 3.5.0 (which pins the v2 AWS SDK bundle), delta-spark 3.3.0.
func sparkLineRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	put := fileWriter(t, root)
	type dep struct{ g, a, v string }
	module := func(g, a string, deps func(v string) []dep, vs ...string) {
		dir := strings.ReplaceAll(g, ".", "/") + "/" + a
		var list strings.Builder
		for _, v := range vs {
			var ds strings.Builder
			if deps != nil {
				for _, d := range deps(v) {
					fmt.Fprintf(&ds, "<dependency><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version></dependency>", d.g, d.a, d.v)
				}
			}
			put(fmt.Sprintf("%s/%s/%s-%s.pom", dir, v, a, v), fmt.Sprintf(`<project><modelVersion>4.0.0</modelVersion><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version><dependencies>%s</dependencies></project>`, g, a, v, ds.String()))
			put(fmt.Sprintf("%s/%s/%s-%s.jar", dir, v, a, v), a+" "+v)
			list.WriteString("<version>" + v + "</version>")
		}
		put(dir+"/maven-metadata.xml", fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<metadata><groupId>%s</groupId><artifactId>%s</artifactId><versioning><versions>%s</versions></versioning></metadata>
`, g, a, list.String()))
	}
	module("org.apache.hadoop", "hadoop-client-api", nil, "3.3.4", "3.4.1")
	module("com.amazonaws", "aws-java-sdk-bundle", nil, "1.12.262", "1.12.780")
	module("software.amazon.awssdk", "bundle", nil, "2.35.4")
	module("org.apache.spark", "spark-sql-kafka-0-10_2.12", func(v string) []dep {
		if strings.HasPrefix(v, "4.") {
			return []dep{{"org.apache.hadoop", "hadoop-client-api", "3.4.1"}}
		}
		return []dep{{"org.apache.hadoop", "hadoop-client-api", "3.3.4"}}
	}, "3.5.1", "3.5.7", "4.0.0")
	module("org.apache.hadoop", "hadoop-aws", func(v string) []dep {
		if v == "3.5.0" {
			return []dep{{"software.amazon.awssdk", "bundle", "2.35.4"}}
		}
		return []dep{{"com.amazonaws", "aws-java-sdk-bundle", "1.12.262"}}
	}, "3.3.4", "3.3.6", "3.5.0")
	module("io.delta", "delta-spark_2.12", nil, "3.2.0", "3.3.0")
	return "file://" + root + "/"
}

// TestOutdatedWithinSparkLine is review 4's MEDIUM 4: --within-spark-line
// --write wrote hadoop-aws 3.5.0 (and the AWS SDK v2 bundle) next to
// hadoop-client-api 3.3.4, which bake --strict then refused. hadoop-aws
// now stays on the lock's Hadoop, Kafka on its Spark line; with --base,
// on the base's Hadoop and Spark.
func TestOutdatedWithinSparkLine(t *testing.T) {
	root, tmp := isolatedCLI(t)
	repo := sparkLineRepo(t)
	lockPath := filepath.Join(tmp, "od.lock")
	common := []string{"--no-default-repositories", "--repositories", repo, "--cache", filepath.Join(tmp, "cache"), "--lock", lockPath}
	if _, stderr, code := runCLI(t, append([]string{"resolve"}, append(common,
		"org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.1,org.apache.hadoop:hadoop-aws:3.3.4,io.delta:delta-spark_2.12:3.2.0")...)...); code != 0 {
		t.Fatalf("resolve: exit %d\n%s", code, stderr)
	}
	newer := func(args ...string) map[string][]string {
		t.Helper()
		out, stderr, code := runCLI(t, append(append([]string{"outdated", "-o", "json", "--within-spark-line"}, common...), args...)...)
		var got jsondoc.Outdated
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("outdated %v: exit %d\n%s%s", args, code, out, stderr)
		}
		m := map[string][]string{}
		for _, p := range got.Packages {
			m[p.Module] = p.Newer
		}
		return m
	}
	want := map[string][]string{
		"org.apache.spark:spark-sql-kafka-0-10_2.12": {"3.5.7"},
		"org.apache.hadoop:hadoop-aws":               {},
		"io.delta:delta-spark_2.12":                  {"3.3.0"},
	}
	if diff := cmp.Diff(want, newer()); diff != "" {
		t.Errorf("--within-spark-line (-want +got):\n%s", diff)
	}
	// The base image of testdata: Spark 3.5.0 (no Kafka newer than it).
	base := "oci:" + filepath.Join(root, "testdata", "base-image") + ":3.5.0-amd64"
	got := newer("--base", base)
	// A lock of Scala 2.12 artifacts on a 2.13 base is said, not fixed.
	if _, stderr, _ := runCLI(t, append([]string{"outdated", "--within-spark-line"}, common...)...); strings.Contains(stderr, "is built for Scala") || !strings.Contains(stderr, "Hadoop 3.3.4") {
		t.Errorf("a Scala warning on the lock's own Scala:\n%s", stderr)
	}
	t.Logf("--base: %v", got)
	if diff := cmp.Diff([]string{}, got["org.apache.spark:spark-sql-kafka-0-10_2.12"]); diff != "" {
		t.Errorf("--base %s: Kafka (-want +got):\n%s", base, diff)
	}
	if diff := cmp.Diff([]string{}, got["org.apache.hadoop:hadoop-aws"]); diff != "" {
		t.Errorf("--base %s: hadoop-aws (-want +got):\n%s", base, diff)
	}

	out, stderr, code := runCLI(t, append([]string{"outdated", "--write", "--within-spark-line"}, common...)...)
	if code != 0 {
		t.Fatalf("--write: exit %d\n%s%s", code, out, stderr)
	}
	lf, err := lock.Read(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	var coords []string
	for _, a := range lf.Artifacts {
		coords = append(coords, a.Coord)
	}
	wantCoords := []string{"com.amazonaws:aws-java-sdk-bundle:1.12.262", "io.delta:delta-spark_2.12:3.3.0",
		"org.apache.hadoop:hadoop-aws:3.3.4", "org.apache.hadoop:hadoop-client-api:3.3.4", "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7"}
	if diff := cmp.Diff(wantCoords, coords, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("lock after --write --within-spark-line (-want +got):\n%s", diff)
	}
}
