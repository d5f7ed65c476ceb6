package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestIvySettingsCLI: --ivy-settings and the argv's spark.jars.ivySettings
// give the settings' chain (here a file: ibiblio over the demo repository,
// with no other repository); rewrite removes the key; unsupported content
// is exit 65 naming the element.
func TestIvySettingsCLI(t *testing.T) {
	root, tmp := isolatedCLI(t)
	write := func(name, body string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("ivysettings.xml", `<ivysettings><property name="demo" value="`+filepath.Join(root, "testdata", "demo-repo")+`"/>
<settings defaultResolver="demo"/><resolvers><ibiblio name="demo" root="file://${demo}/" m2compatible="true"/></resolvers></ivysettings>`)
	bad := write("bad.xml", `<ivysettings><settings defaultResolver="s"/><resolvers><sftp name="s"/></resolvers></ivysettings>`)
	cache := filepath.Join(tmp, "cache")
	ctx := context.Background()

	// --offline from an empty cache: file: repositories are read in place.
	code, out, errs := runPrebake(ctx, "resolve", "-q", "-o", "names", "--offline", "--cache", cache, "--ivy-settings", good, "org.slf4j:slf4j-api:2.0.7")
	if code != 0 || strings.TrimSpace(out) != "org.slf4j_slf4j-api-2.0.7.jar" {
		t.Fatalf("resolve --ivy-settings: exit %d, stdout %q\n%s", code, out, errs)
	}

	code, out, errs = runPrebake(ctx, "rewrite", "-q", "--cache", cache, "--", "--master", "local[1]",
		"--conf", "spark.jars.ivySettings="+good, "--packages", "org.slf4j:slf4j-api:2.0.7", "app.py")
	if code != 0 || strings.Contains(out, "ivySettings") || !strings.Contains(out, "org.slf4j_slf4j-api-2.0.7.jar") {
		t.Fatalf("rewrite with spark.jars.ivySettings: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"resolve", "--cache", cache, "--ivy-settings", bad, "org.slf4j:slf4j-api:2.0.7"}, exitcode.DataErr, "resolver type sftp"},
		{[]string{"rewrite", "--cache", cache, "--ivy-settings", bad, "--", "--conf", "spark.jars.ivySettings=" + good, "--packages", "org.slf4j:slf4j-api:2.0.7", "app.py"}, exitcode.Usage, "differ"},
		{[]string{"resolve", "--cache", cache, "--ivy-settings", "https://h.example/ivysettings.xml", "org.slf4j:slf4j-api:2.0.7"}, exitcode.Usage, "scheme https"},
	} {
		code, _, errs := runPrebake(ctx, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("prebake %s: exit %d, want %d with %q\n%s", strings.Join(tc.args, " "), code, tc.code, tc.msg, errs)
		}
	}
}
