package repo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prebake/prebake/internal/m2test"
)

func TestBuildChainSettings(t *testing.T) {
	t.Setenv("PREBAKE_TEST_PW", "s3cret-env")
	type entry struct {
		Repository
		User, Pass string
	}
	tests := []struct {
		name     string
		settings string
		req      Config
		want     []entry
	}{
		{
			name: "one mirror of everything collapses the chain; m2 is never mirrored",
			settings: `<mirrors><mirror><id>nexus</id><url>https://nexus.example/group/</url><mirrorOf>*</mirrorOf></mirror></mirrors>
<servers><server><id>nexus</id><username>ci</username><password>${env.PREBAKE_TEST_PW}</password></server></servers>`,
			req: Config{Repositories: []string{"https://a.example/m2,file:///srv/repo"}},
			want: []entry{
				{Repository{RepoLocalM2, "file:///home/u/.m2/repository/"}, "", ""},
				{Repository{"nexus", "https://nexus.example/group/"}, "ci", "s3cret-env"},
			},
		},
		{
			name: "exact id beats an earlier pattern; exclusions; servers by repo id",
			settings: `<mirrors>
<mirror><id>all</id><url>https://all.example/</url><mirrorOf>external:*,!repo-2</mirrorOf></mirror>
<mirror><id>sp</id><url>https://sp.example/</url><mirrorOf>spark-packages</mirrorOf></mirror>
</mirrors>
<servers>
<server><id>repo-2</id><username>r2</username><password>pw2</password></server>
<server><id>repo-3</id><username>r3</username><password>pw3</password></server>
</servers>`,
			req: Config{Repositories: []string{"https://a.example/,https://bob:urlpw@b.example/,http://127.0.0.1:1/local/"}},
			want: []entry{
				{Repository{RepoLocalM2, "file:///home/u/.m2/repository/"}, "", ""},
				{Repository{"all", "https://all.example/"}, "", ""},
				{Repository{"sp", "https://sp.example/"}, "", ""},
				{Repository{"repo-2", "https://b.example/"}, "r2", "pw2"}, // a <server> replaces URL userinfo
				{Repository{"repo-3", "http://127.0.0.1:1/local/"}, "r3", "pw3"},
			},
		},
		{
			name:     "a mirrored repository's userinfo never reaches the mirror",
			settings: `<mirrors><mirror><id>m</id><url>https://m.example/</url><mirrorOf>repo-1</mirrorOf></mirror></mirrors>`,
			req:      Config{NoDefaultRepositories: true, Repositories: []string{"https://bob:urlpw@b.example/"}},
			want:     []entry{{Repository{"m", "https://m.example/"}, "", ""}},
		},
		{
			name:     "localRepository replaces ~/.m2/repository",
			settings: `<localRepository>${user.home}/alt-m2</localRepository>`,
			want: []entry{
				{Repository{RepoLocalM2, "file:///home/u/alt-m2/"}, "", ""},
				{Repository{RepoCentral, DefaultCentralURL}, "", ""},
				{Repository{RepoSparkPackage, DefaultSparkPackagesURL}, "", ""},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Settings = writeSettings(t, tt.settings)
			tt.req.Home = "/home/u"
			chain, _, err := chainFor(context.Background(), tt.req, defaultOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			var got []entry
			for _, r := range chain {
				got = append(got, entry{r.Repository, r.user, r.pass})
				if r.hasAuth != (r.user != "") {
					t.Errorf("%s: hasAuth %v with user %q", r, r.hasAuth, r.user)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("chain (-want +got):\n%s", d)
			}
			if in := strings.Join(inputsRepositories(chain), " "); strings.Contains(in, "pw") || strings.Contains(in, "s3cret") {
				t.Errorf("inputs hold a password: %s", in)
			}
		})
	}
}

// writeSettings writes a settings.xml with body inside <settings>.
func writeSettings(t *testing.T, body string) string {
	t.Helper()
	return filepath.Join(m2test.WriteFiles(t, map[string]string{"settings.xml": `<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0">` + body + `</settings>`}), "settings.xml")
}
