package spark

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/testenv"
)

// TestMakeDemoSpark runs `make demo-spark` (into a temp dir): the demo's
// journey ends in a real local Spark job that loads the resolved jar.
func TestMakeDemoSpark(t *testing.T) {
	testenv.RequireIT(t)
	env, home := sparkEnv(t)
	sparkHome, _ := testenv.SparkHome(t, sparkVersion)
	dir := t.TempDir()
	// -o build: the binary TestMain built, not a -trimpath build of its own.
	cmd := exec.Command("make", "-C", repoRoot, "-o", "build", "demo-spark", "SPARK_DEMO_DIR="+filepath.Join(dir, "demo"),
		"BIN="+prebakeBin, "SPARK_HOME="+sparkHome)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("make demo-spark: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "GREETING: hello spark from a jar that prebake resolved (3 rows)") {
		t.Errorf("the Spark job did not run:\n%s", out.String())
	}
	noIvyWork(t, home, out.String())
}
