package cmd

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// hostileRepo is a file:// Maven repository written by a test: modules are
// placed where prebake's repository layout puts them ("." → "/" in the
// groupId), whatever their coordinates hold.
type hostileRepo struct {
	t    *testing.T
	root string
}

func newHostileRepo(t *testing.T) *hostileRepo {
	return &hostileRepo{t: t, root: t.TempDir()}
}

func (r *hostileRepo) url() string { return "file://" + r.root + "/" }

// module writes g:a:v's POM (body inside <project>) and, unless jar is
// empty, its jar, under the repository root (paths the OS would resolve
// outside the root are refused here: the test must not escape either).
func (r *hostileRepo) module(g, a, v, body, jar string) {
	r.t.Helper()
	dir := filepath.Join(r.root, strings.ReplaceAll(g, ".", "/"), a, v)
	if !strings.HasPrefix(dir, r.root+string(filepath.Separator)) {
		r.t.Fatalf("test repository path %s escapes %s", dir, r.root)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	pom := "<project><modelVersion>4.0.0</modelVersion><groupId>" + xmlText(g) + "</groupId><artifactId>" + xmlText(a) +
		"</artifactId><version>" + xmlText(v) + "</version>" + body + "</project>"
	if err := os.WriteFile(filepath.Join(dir, a+"-"+v+".pom"), []byte(pom), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if jar != "" {
		if err := os.WriteFile(filepath.Join(dir, a+"-"+v+".jar"), []byte(jar), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\t", "&#9;", "\n", "&#10;").Replace(s)
}

func dep(g, a, v, extra string) string {
	return "<dependencies><dependency><groupId>" + xmlText(g) + "</groupId><artifactId>" + xmlText(a) +
		"</artifactId><version>" + xmlText(v) + "</version>" + extra + "</dependency></dependencies>"
}

// up climbs from any temp directory to the file system root.
var up = strings.Repeat("../", 24)

// listTree lists every path under dir (relative), for before/after checks.
func listTree(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = true
		}
		return nil
	})
	return out
}

// TestHostileCoordinates replays finding 1 of the security review: a POM
// whose coordinates hold "/", "\", "..", or control characters, from a
// dependency, a property, a parent, a BOM, a relocation, dependency
// management or maven-metadata.xml, must be refused with 65 naming the POM,
// and nothing may be written anywhere: no file outside the cache (rewrite),
// no tar entry outside the jars directory (bake image: the entry that
// replaced /opt/spark/jars/spark-core_2.12-3.5.0.jar), no file outside a
// file:// store (bake s3), no lock.
func TestHostileCoordinates(t *testing.T) {
	sandbox := t.TempDir() // where an escape would land
	escape := up + strings.TrimPrefix(sandbox, "/") + "/PWNED"
	cases := []struct {
		name string
		// setup writes the hostile modules; the root module is ev:root:1.
		setup func(r *hostileRepo)
		// inErr must appear in the error (besides the POM's name).
		inErr string
		// pom is the POM the error must name.
		pom string
		// all runs rewrite, bake image and bake s3 too (else resolve only).
		all bool
	}{
		{name: "groupId escapes the cache", all: true, pom: "root-1.pom", inErr: `groupId "../`,
			setup: func(r *hostileRepo) {
				r.module("ev", "root", "1", dep(escape, "art", "1", ""), "root jar")
				r.module(escape, "art", "1", "", "MALICIOUS")
			}},
		{name: "groupId replaces spark-core in the image", all: true, pom: "root-1.pom", inErr: "opt/spark/jars/spark-core",
			setup: func(r *hostileRepo) {
				g := up + "opt/spark/jars/spark-core"
				r.module("ev", "root", "1", dep(g, "2.12", "3.5.0", ""), "root jar")
				r.module(g, "2.12", "3.5.0", "", "MALICIOUS spark-core replacement")
			}},
		{name: "artifactId reads outside the repository", pom: "root-1.pom", inErr: `artifactId "x/../`,
			setup: func(r *hostileRepo) {
				r.module("ev", "root", "1", dep("ev", "x/../"+escape+"ARTPWN", "1", ""), "root jar")
			}},
		{name: "version", pom: "root-1.pom", inErr: `version "1/../`,
			setup: func(r *hostileRepo) { r.module("ev", "root", "1", dep("ev", "a", "1/../../../x", ""), "root jar") }},
		{name: "classifier", pom: "root-1.pom", inErr: `classifier "../`,
			setup: func(r *hostileRepo) {
				r.module("ev", "root", "1", dep("ev", "a", "1", "<classifier>../../../../x</classifier>"), "root jar")
				r.module("ev", "a", "1", "", "a jar")
			}},
		{name: "type", pom: "root-1.pom", inErr: `type "..`,
			setup: func(r *hostileRepo) { r.module("ev", "root", "1", dep("ev", "a", "1", "<type>..</type>"), "root jar") }},
		{name: "backslash", pom: "root-1.pom", inErr: `'\\'`,
			setup: func(r *hostileRepo) { r.module("ev", "root", "1", dep(`..\..\x`, "a", "1", ""), "root jar") }},
		{name: "control character", pom: "root-1.pom", inErr: "control character U+0009",
			setup: func(r *hostileRepo) { r.module("ev", "root", "1", dep("ev", "a\tb", "1", ""), "root jar") }},
		{name: "from a property", pom: "root-1.pom", inErr: `groupId "../`,
			setup: func(r *hostileRepo) {
				r.module("ev", "root", "1", "<properties><g>"+escape+"</g></properties>"+dep("${g}", "art", "1", ""), "root jar")
			}},
		{name: "managed version", pom: "root-1.pom", inErr: `version "../`,
			setup: func(r *hostileRepo) {
				r.module("ev", "root", "1", `<dependencyManagement><dependencies><dependency><groupId>ev</groupId><artifactId>a</artifactId><version>../../x</version></dependency></dependencies></dependencyManagement>`+
					`<dependencies><dependency><groupId>ev</groupId><artifactId>a</artifactId></dependency></dependencies>`, "root jar")
			}},
		{name: "parent", pom: "root-1.pom", inErr: `groupId "../`,
			setup: func(r *hostileRepo) {
				r.module("ev", "root", "1", "<parent><groupId>"+escape+"</groupId><artifactId>p</artifactId><version>1</version></parent>", "root jar")
			}},
		{name: "BOM import", pom: "root-1.pom", inErr: `artifactId "../`,
			setup: func(r *hostileRepo) {
				r.module("ev", "root", "1", `<dependencyManagement><dependencies><dependency><groupId>ev</groupId><artifactId>../../bom</artifactId><version>1</version><type>pom</type><scope>import</scope></dependency></dependencies></dependencyManagement>`, "root jar")
			}},
		{name: "relocation", pom: "old-1.pom", inErr: `groupId "../`,
			setup: func(r *hostileRepo) {
				r.module("ev", "root", "1", dep("ev", "old", "1", ""), "root jar")
				r.module("ev", "old", "1", "<distributionManagement><relocation><groupId>"+escape+"</groupId></relocation></distributionManagement>", "")
			}},
		{name: "maven-metadata.xml", pom: "maven-metadata.xml", inErr: `version "../`,
			setup: func(r *hostileRepo) {
				r.module("ev", "root", "1", dep("ev", "dyn", "latest.release", ""), "root jar")
				dir := filepath.Join(r.root, "ev", "dyn")
				os.MkdirAll(dir, 0o755)
				os.WriteFile(filepath.Join(dir, "maven-metadata.xml"), []byte(`<metadata><groupId>ev</groupId><artifactId>dyn</artifactId><versioning><versions><version>1</version><version>../../../../x</version></versions></versioning></metadata>`), 0o644)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newHostileRepo(t)
			tc.setup(r)
			before := listTree(t, sandbox)
			work := t.TempDir()
			cache, lock := filepath.Join(work, "cache"), filepath.Join(work, "prebake.lock")
			res := []string{"--no-default-repositories", "--repositories", r.url(), "--cache", cache}
			runs := [][]string{append([]string{"resolve", "--lock", lock, "ev:root:1"}, res...)}
			if tc.all {
				runs = append(runs,
					append(append([]string{"rewrite"}, res...), "--", "--master", "local[2]", "--packages", "ev:root:1", "app.jar"),
					append([]string{"bake", "image", "-q", "--base", "oci:../testdata/base-image:3.5.0-amd64", "--target", "oci:" + filepath.Join(work, "img"), "--packages", "ev:root:1"}, res...),
					append([]string{"bake", "s3", "--store", "file://" + filepath.Join(work, "store"), "--packages", "ev:root:1"}, res...),
				)
			}
			for _, args := range runs {
				out, stderr, code := runCLI(t, args...)
				if code != exitcode.DataErr {
					t.Errorf("%s: exit %d, want 65\nstdout: %s\nstderr: %s", args[0], code, out, stderr)
					continue
				}
				if !strings.Contains(stderr, tc.pom) || !strings.Contains(stderr, tc.inErr) {
					t.Errorf("%s: the error names neither %s nor %s:\n%s", args[0], tc.pom, tc.inErr, stderr)
				}
				if i := strings.Index(stderr, "prebake: "); i < 0 || strings.Count(stderr[i:], "\n") > 1 || len(stderr)-i > 1000 {
					t.Errorf("%s: want a short error on one line:\n%s", args[0], stderr)
				}
			}
			if _, err := os.Stat(lock); err == nil {
				t.Errorf("a lock was written")
			}
			for _, d := range []string{"img", "store"} {
				if _, err := os.Stat(filepath.Join(work, d)); err == nil {
					t.Errorf("%s was created", d)
				}
			}
			if after := listTree(t, sandbox); len(after) != len(before) {
				t.Errorf("files appeared outside the cache: %v", after)
			}
		})
	}
}

// TestHostileLock replays finding 8: a lock edited to hold "..", NUL or a
// path in a file name, a negative size, a bad coordinate or a file twice
// (lockHash emptied, which is accepted and recomputed) is refused with 65
// by every command that reads it, before anything is written.
func TestHostileLock(t *testing.T) {
	repo := s3FileRepo(t)
	work := t.TempDir()
	cache := filepath.Join(work, "cache")
	good := filepath.Join(work, "good.lock")
	if _, stderr, code := runCLI(t, "resolve", "-q", "--no-default-repositories", "--repositories", repo, "--cache", cache, "--lock", good, "com.example:lib-a:1.0"); code != 0 {
		t.Fatalf("resolve: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	var lock map[string]any
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(a []any)
		inErr string
	}{
		{"file ..", func(a []any) { a[0].(map[string]any)["file"] = ".." }, `file name ".."`},
		{"file with NUL", func(a []any) { a[0].(map[string]any)["file"] = "a\x00b.jar" }, `holds '\x00'`},
		{"file with a path", func(a []any) { a[0].(map[string]any)["file"] = "../../x.jar" }, `holds '/'`},
		{"negative size", func(a []any) { a[0].(map[string]any)["size"] = -1 }, "size -1 is negative"},
		{"coord with ..", func(a []any) { a[0].(map[string]any)["coord"] = "..:lib-a:1.0" }, `groupId ".."`},
		{"coord with two parts", func(a []any) { a[0].(map[string]any)["coord"] = "com.example:lib-a" }, "not g:a:v[:classifier]"},
		{"a file twice", func(a []any) { a[1].(map[string]any)["file"] = a[0].(map[string]any)["file"] }, "appears twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l map[string]any
			json.Unmarshal(data, &l)
			tc.edit(l["artifacts"].([]any))
			l["lockHash"] = ""
			edited, _ := json.Marshal(l)
			dir := t.TempDir()
			path := filepath.Join(dir, "prebake.lock")
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"resolve", "--lock", path, "--cache", cache, "--no-default-repositories", "--repositories", repo, "com.example:lib-a:1.0"},
				{"rewrite", "--lock", path, "--cache", cache, "--", "--master", "local[1]", "--packages", "com.example:lib-a:1.0", "app.jar"},
				{"bake", "image", "-q", "--lock", path, "--cache", cache, "--base", "oci:../testdata/base-image:3.5.0-amd64", "--target", "oci:" + filepath.Join(dir, "img")},
				{"bake", "s3", "--lock", path, "--cache", cache, "--store", "file://" + filepath.Join(dir, "store")},
			} {
				out, stderr, code := runCLI(t, args...)
				if code != exitcode.DataErr || !strings.Contains(stderr, tc.inErr) || !strings.Contains(stderr, path) {
					t.Errorf("%s: exit %d (want 65, naming %s and %s)\nstdout: %s\nstderr: %s", args[0], code, path, tc.inErr, out, stderr)
				}
			}
			for _, d := range []string{"img", "store"} {
				if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
					t.Errorf("%s was created", d)
				}
			}
		})
	}
}
