package repo

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMavenCentralURL(t *testing.T) {
	const superPOM = `<project><repositories><repository><id>snapshots</id><url>https://snap.example/x</url></repository>
<repository><id>central</id><name>Central Repository</name><url>https://central.example/maven2</url></repository></repositories></project>`
	settings := func(mirrors string) string {
		return `<settings><mirrors>` + mirrors + `</mirrors></settings>`
	}
	mirror := func(id, of, url string) string {
		return `<mirror><id>` + id + `</id><mirrorOf>` + of + `</mirrorOf><url>` + url + `</url></mirror>`
	}
	for _, tc := range []struct {
		name         string
		user, global string // settings.xml contents ("" = absent)
		noJar        bool
		want, err    string
	}{
		{name: "super POM when no settings", want: "https://central.example/maven2/"},
		{name: "commented-out mirror is no mirror", global: settings(`<!-- ` + mirror("m", "*", "https://no.example/") + ` -->`), want: "https://central.example/maven2/"},
		{name: "user mirror of central", user: settings(mirror("corp", "central", "https://corp.example/central")), want: "https://corp.example/central/"},
		{name: "global mirror of everything", global: settings(mirror("all", "*", "https://all.example/m2/")), want: "https://all.example/m2/"},
		{name: "user settings win over global", user: settings(mirror("u", "external:*", "https://user.example/")), global: settings(mirror("g", "*", "https://global.example/")), want: "https://user.example/"},
		{name: "a mirror of other ids only", user: settings(mirror("o", "*,!central", "https://other.example/")), want: "https://central.example/maven2/"},
		{name: "exact id wins over a pattern", global: settings(mirror("all", "*", "https://all.example/") + mirror("c", "central", "https://exact.example/")), want: "https://exact.example/"},
		{name: "no jar and no mirror", noJar: true, err: "no maven-model-builder-*.jar"},
		{name: "malformed settings", user: "<settings><mirrors>", err: "malformed XML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, mvn := t.TempDir(), t.TempDir()
			write := func(p, s string) {
				t.Helper()
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.user != "" {
				write(filepath.Join(home, ".m2", "settings.xml"), tc.user)
			}
			if tc.global != "" {
				write(filepath.Join(mvn, "conf", "settings.xml"), tc.global)
			}
			if !tc.noJar {
				writeJar(t, filepath.Join(mvn, "lib", "maven-model-builder-3.9.9.jar"), "org/apache/maven/model/pom-4.0.0.xml", superPOM)
			}
			got, err := MavenCentralURL(home, mvn)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func writeJar(t *testing.T, path, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	w, err := z.Create(name)
	if err == nil {
		_, err = w.Write([]byte(content))
	}
	if err == nil {
		err = z.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}
