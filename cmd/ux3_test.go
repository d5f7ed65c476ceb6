package cmd

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// closedURL is an http:// URL on a port nothing listens on (refused at once).
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/maven/"
}

// TestTypoIsNotAnOutage is review 3's finding 3: a typo'd coordinate that
// one repository answered 404 for, while another was unreachable, was exit
// 69 with the network error first. The answer that came back now leads, the
// unreachable repository is named, and the code is 66; with no answer at
// all (only unreachable repositories) it stays 69, an outage.
func TestTypoIsNotAnOutage(t *testing.T) {
	_, tmp := isolatedCLI(t)
	t.Setenv("HOME", tmp)
	central := httptest.NewServer(http.NotFoundHandler())
	defer central.Close()
	down := closedURL(t)
	cache := filepath.Join(tmp, "cache")
	tests := []struct {
		name  string
		repos string
		want  int
		msgs  []string
	}{
		{"404 and unreachable", central.URL + "/," + down, exitcode.NotFound,
			[]string{"org.apache.sprak:spark-avro_2.12:3.5.1: not found in repo-1 (" + central.URL + "/); could not ask repo-2 (" + down + ")"}},
		{"unreachable first, then 404", down + "," + central.URL + "/", exitcode.NotFound,
			[]string{"not found in repo-2 (" + central.URL + "/); could not ask repo-1 (" + down + ")"}},
		{"only unreachable", down, exitcode.Unavailable, []string{"could not ask repo-1 (" + down + ")"}},
		{"only 404", central.URL + "/", exitcode.NotFound, []string{"not found in repo-1 (" + central.URL + "/)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runPrebake(context.Background(), "resolve", "--no-default-repositories", "--repositories", tt.repos, "--cache", cache,
				"org.apache.sprak:spark-avro_2.12:3.5.1")
			if code != tt.want {
				t.Fatalf("exit %d, want %d\n%s", code, tt.want, errs)
			}
			for _, m := range tt.msgs {
				if !strings.Contains(errs, m) {
					t.Errorf("stderr lacks %q:\n%s", m, errs)
				}
			}
		})
	}
}

// TestOfflineMissIsUnavailable is finding 12: resolve --offline with an
// empty cache was 66 although the README says 69 (nothing was asked).
func TestOfflineMissIsUnavailable(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("HOME", tmp)
	code, _, errs := runPrebake(context.Background(), "resolve", "--offline", "--cache", filepath.Join(tmp, "empty"),
		"--repositories", "file://"+filepath.Join(root, "testdata", "demo-repo")+"/", "org.apache.spark:spark-avro_2.12:3.5.1")
	if code != exitcode.Unavailable || !strings.Contains(errs, "(offline: not asked)") {
		t.Errorf("exit %d, want 69\n%s", code, errs)
	}
}
