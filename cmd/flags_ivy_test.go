package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestIvyVersionFlag: --ivy-version (or prebake.yaml's ivyVersion, or
// $PREBAKE_IVY_VERSION) reaches the request; an unknown version is exit 64
// naming the versions prebake follows.
func TestIvyVersionFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		yaml string
		env  map[string]string
		want string
		code int
	}{
		{name: "default", want: ""},
		{name: "flag", args: []string{"--ivy-version", "2.6.0"}, want: "2.6.0"},
		{name: "flag 2.5.1", args: []string{"--ivy-version", "2.5.1", "--spark-version", "4.3.0"}, want: "2.5.1"},
		{name: "config", yaml: "ivyVersion: 2.6.0\n", want: "2.6.0"},
		{name: "env", env: map[string]string{"PREBAKE_IVY_VERSION": "2.5.3"}, want: "2.5.3"},
		{name: "flag beats config", args: []string{"--ivy-version", "2.5.3"}, yaml: "ivyVersion: 2.6.0\n", want: "2.5.3"},
		{name: "unknown", args: []string{"--ivy-version", "2.7.0"}, code: exitcode.Usage},
		{name: "unknown in config", yaml: "ivyVersion: '2.6'\n", code: exitcode.Usage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f resolveFlags
			fs := pflag.NewFlagSet("resolve", pflag.ContinueOnError)
			f.add(fs)
			f.addSparkVersion(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg := ""
			if tc.yaml != "" {
				cfg = filepath.Join(t.TempDir(), "prebake.yaml")
				if err := os.WriteFile(cfg, []byte(tc.yaml), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			getenv := func(k string) string { return tc.env[k] }
			if _, err := applySettings(fs, cfg, getenv); err != nil {
				t.Fatal(err)
			}
			req, err := f.request()
			if tc.code != 0 {
				if exitcode.Code(err) != tc.code || !strings.Contains(err.Error(), "2.5.1, 2.5.3, 2.6.0") || !strings.Contains(err.Error(), "--ivy-version") {
					t.Fatalf("request: %v (exit %d), want exit %d naming --ivy-version and the versions known", err, exitcode.Code(err), tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, req.IvyVersion); d != "" {
				t.Errorf("IvyVersion (-want +got):\n%s", d)
			}
		})
	}
}
