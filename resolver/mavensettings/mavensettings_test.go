package mavensettings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
)

func TestMirrorOfMatches(t *testing.T) {
	const (
		ext   = "https://repo1.maven.org/maven2/"
		extH  = "http://nexus.example/r/"
		local = "http://127.0.0.1:8081/r/"
		lhost = "http://localhost:8081/r/"
		file  = "file:///srv/repo/"
	)
	tests := []struct {
		pattern, id, url string
		want             bool
	}{
		{"*", "central", ext, true},
		{"*", "repo-1", file, true},
		{"central", "central", ext, true},
		{"central", "spark-packages", ext, false},
		{"central,spark-packages", "spark-packages", ext, true},
		{"central, repo-2", "repo-2", ext, true}, // entries are trimmed
		{"central,repo-2", "repo-1", ext, false},
		{"external:*", "repo-1", ext, true},
		{"external:*", "repo-1", local, false},
		{"external:*", "repo-1", lhost, false},
		{"external:*", "repo-1", file, false},
		{"external:http:*", "repo-1", extH, true},
		{"external:http:*", "repo-1", ext, false}, // https is not http
		{"external:http:*", "repo-1", local, false},
		{"*,!spark-packages", "spark-packages", ext, false},
		{"*,!spark-packages", "central", ext, true},
		{"!central,*", "central", ext, false}, // an exclusion wins wherever it is
		{"external:*,!repo-1", "repo-1", ext, false},
		{"!repo-1", "repo-2", ext, false}, // only exclusions: nothing matches
		{"repo-1", "repo-10", ext, false},
		{"", "central", ext, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%s", tt.pattern, tt.id, tt.url), func(t *testing.T) {
			if got := mirrorOfMatches(tt.pattern, tt.id, tt.url); got != tt.want {
				t.Errorf("mirrorOfMatches(%q, %q, %q) = %v, want %v", tt.pattern, tt.id, tt.url, got, tt.want)
			}
		})
	}
}

func TestInterpolate(t *testing.T) {
	env := map[string]string{"NEXUS_PW": "p@ss", "EMPTY": "", "A_B": "x"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want, missing string
	}{
		{"plain", "plain", ""},
		{"${env.NEXUS_PW}", "p@ss", ""},
		{"${user.home}/.m2/alt", "/home/u/.m2/alt", ""},
		{"pre-${env.A_B}-${env.NEXUS_PW}", "pre-x-p@ss", ""},
		{"${env.EMPTY}", "", ""},
		{"${env.UNSET}", "", "UNSET"},
		{"${project.version} ${HOME} $env.X", "${project.version} ${HOME} $env.X", ""}, // left as Maven leaves them
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, missing := interpolate(tt.in, "/home/u", lookup)
			if got != tt.want || missing != tt.missing {
				t.Errorf("interpolate(%q) = %q, %q; want %q, %q", tt.in, got, missing, tt.want, tt.missing)
			}
		})
	}
}

func writeSettings(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "settings.xml")
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0">` + body + `</settings>`
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadSettingsErrors(t *testing.T) {
	t.Setenv("PREBAKE_TEST_PW", "s3cret-env")
	lookup := os.LookupEnv
	missing := filepath.Join(t.TempDir(), "nope.xml")
	tests := []struct {
		name, path string
		kind       errdefs.Kind
		want       string
	}{
		{"missing file", missing, errdefs.NotFound, missing},
		{"malformed", writeSettings(t, `<mirrors><mirror>`), errdefs.Invalid, "malformed XML"},
		{"not settings", func() string {
			p := filepath.Join(t.TempDir(), "pom.xml")
			os.WriteFile(p, []byte("<project/>"), 0o600)
			return p
		}(), errdefs.Invalid, "malformed XML"},
		{"mirror without url", writeSettings(t, `<mirrors><mirror><id>m</id><mirrorOf>*</mirrorOf></mirror></mirrors>`), errdefs.Invalid, "mirror m: no <url>"},
		{"mirror without mirrorOf", writeSettings(t, `<mirrors><mirror><id>m</id><url>https://m.example/</url></mirror></mirrors>`), errdefs.Invalid, "no <mirrorOf>"},
		{"unset env", writeSettings(t, `<servers><server><id>m</id><username>u</username><password>${env.PREBAKE_TEST_UNSET}</password></server></servers>`), errdefs.Invalid, "server m password: ${env.PREBAKE_TEST_UNSET} is not set"},
		{"encrypted password", writeSettings(t, `<servers><server><id>m</id><username>u</username><password>{COQLCE6DU6GtcS5P=}</password></server></servers>`), errdefs.BadArgument, "encrypted passwords"},
		{"bad offline", writeSettings(t, `<offline>yes</offline>`), errdefs.Invalid, "offline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.path, "/home/u", lookup)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %s and %q", err, tt.path, tt.want)
			}
			if k := errdefs.KindOf(err); k != tt.kind || !errors.Is(err, tt.kind) {
				t.Errorf("kind %v, want %v", k, tt.kind)
			}
			if strings.Contains(err.Error(), "COQLCE6") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error prints a password: %v", err)
			}
		})
	}
}
