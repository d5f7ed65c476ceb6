package resolver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
)

// TestConfigurationNotFoundLikeIvy: a module without POM that evicted a
// version with one is asked for the plain configurations the loser was
// fetched in; its default descriptor lacks them, so Ivy (and Spark) fail
// with the last one as the problem (issue 19). prebake fails the same way,
// with the oracle's message word for word and exit 65.
func TestConfigurationNotFoundLikeIvy(t *testing.T) {
	d := parityDir(t)
	var c parityCase
	for _, x := range loadParityCases(t, filepath.Join(d, "cases"), map[string]string{"PARITY": d}) {
		if x.name == "m2-classified-nopom-evicts-pom" {
			c = x
		}
	}
	if c.name == "" {
		t.Fatal("golden m2-classified-nopom-evicts-pom missing")
	}
	_, err := resolveWithFS(context.Background(), t, c)
	if !errors.Is(err, ErrConfigurationNotFound) {
		t.Fatalf("err = %v, want ErrConfigurationNotFound", err)
	}
	if got := errdefs.KindOf(err); got != errdefs.Invalid {
		t.Errorf("exit code %d, want %d", got, errdefs.Invalid)
	}
	if want := strings.TrimPrefix(c.expectedRaw, "error "); err.Error() != want {
		t.Errorf("message differs from the oracle's:\n got  %s\n want %s", err, want)
	}
}

func TestDefaultDescriptorRealConfs(t *testing.T) {
	for conf, want := range map[string]string{
		"default(runtime)": "default",
		"master(*)":        "default",
		"compile(*)":       "default",
		"master":           "master",
		"compile(runtime)": "runtime",
		"runtime()":        "",
		"default":          "default",
	} {
		if got := strings.Join(defaultDescriptorRealConfs(conf), ","); got != want {
			t.Errorf("%s: %q, want %q", conf, got, want)
		}
	}
}
