package rewrite

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
	"go.yaml.in/yaml/v3"
)

// TestRewriteManifestIT runs `prebake rewrite --manifest` against a real
// Maven repository (nginx serving testdata/rewrite/m2): the manifest's own
// spec.deps.repositories and packages reach the resolver.
func TestRewriteManifestIT(t *testing.T) {
	testenv.RequireIT(t)
	repo, err := filepath.Abs(filepath.Join("testdata", "rewrite", "m2"))
	if err != nil {
		t.Fatal(err)
	}
	url := mavenhttp.StartNginx(t, repo, "", "").URL
	dir := t.TempDir()
	bin := testenv.Prebake(t)
	cache := t.TempDir()
	run := func(manifest string, extra ...string) (string, string, error) {
		p := filepath.Join(dir, "app.yaml")
		if err := os.WriteFile(p, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append([]string{"rewrite", "--no-default-repositories", "--cache", cache, "--manifest", p}, extra...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	app := "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata:\n  name: hello\nspec:\n  type: Scala\n  mode: cluster\n  image: spark:3.5.5\n  mainApplicationFile: local:///opt/app.jar\n  deps:\n    repositories:\n      - " + url + "\n    packages:\n      - com.example:hello:1.0\n"
	// The packages resolve from the manifest's repository; cluster mode
	// without an image or a store is then refused (exit 64), not a
	// resolution failure (66/69).
	_, stderr, err := run(app)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 64 {
		t.Fatalf("manifest without --image-from/--store: err %v, want exit 64\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "app.yaml document 1 (SparkApplication hello)") {
		t.Errorf("the error does not name the file and document: %s", stderr)
	}
	if strings.Contains(stderr, "unresolved") || !strings.Contains(stderr, "give --image-from or --store") {
		t.Errorf("want the cluster-mode refusal after a successful resolution, got: %s", stderr)
	}
	// No packages: --image-from swaps the image and keeps the rest.
	plain := "# keep me\napiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata:\n  name: plain # and me\nspec:\n  image: spark:3.5.5\n  mainApplicationFile: local:///opt/app.jar\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: spark}\n"
	out, stderr, err := run(plain, "--image-from", "registry.example/spark:prebake")
	if err != nil {
		t.Fatalf("prebake rewrite --manifest: %v\n%s", err, stderr)
	}
	want := strings.Replace(plain, "spark:3.5.5", "registry.example/spark:prebake", 1)
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
}
