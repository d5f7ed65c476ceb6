package resolver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
	"github.com/prebake/prebake/internal/testenv"
)

// The spark.jars.ivySettings oracle: testdata/ivysettings/cases/NAME.xml is
// a settings file (with NAME*.properties and NAME-*.xml beside it), and
// NAME.args the rest of the submission (packages, repositories, exclude,
// env lines). NAME.expected is what the real spark-submit retrieved with
// that file ("jar <file> <sha256>" lines, or "error"). The repositories
// (testdata/ivysettings/repos, made by gen.py) are served openly at @URL@
// and behind basic auth at @PRIVATE@ (user spark, password @PASS@).
//
// TestIvySettingsGoldens replays the goldens against prebake with Go
// servers; TestIvySettingsSpark (PREBAKE_IT=1) serves the repositories with
// nginx and checks spark-submit and prebake against the goldens live
// (PREBAKE_IVS_RECORD=1 rewrites them from Spark; PREBAKE_IVS_SPARK=4.0.5
// runs another installed Spark line against them).

const ivsDir = "testdata/ivysettings"

const ivsUser, ivsPass = "spark", "ivs-n0t-in-any-output"

type ivsCase struct {
	name            string
	packages, repos string
	exclude         string
	env             [][2]string
	// linkIvyHome links <user.home>/.ivy2/local to the repositories, for a
	// file that reads ${ivy.home} while spark.jars.ivy points elsewhere.
	linkIvyHome bool
}

func ivsCases(t *testing.T) []ivsCase {
	t.Helper()
	argFiles, err := filepath.Glob(filepath.Join(ivsDir, "cases", "*.args"))
	if err != nil || len(argFiles) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	var out []ivsCase
	for _, f := range argFiles {
		c := ivsCase{name: strings.TrimSuffix(filepath.Base(f), ".args")}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), " ")
			switch k {
			case "packages":
				c.packages = v
			case "repositories":
				c.repos = v
			case "exclude":
				c.exclude = v
			case "env":
				ek, ev, _ := strings.Cut(v, "=")
				c.env = append(c.env, [2]string{ek, ev})
			case "link-ivy-home":
				c.linkIvyHome = true
			case "":
			default:
				t.Fatalf("%s: unknown line %q", f, sc.Text())
			}
		}
		out = append(out, c)
	}
	return out
}

// ivsEnv is where a run's placeholders point.
type ivsEnv struct{ url, private, host, repos string }

func (e ivsEnv) expand(s string) string {
	return strings.NewReplacer("@URL@", e.url, "@PRIVATE@", e.private, "@HOST@", e.host, "@PASS@", ivsPass, "@REPOS@", e.repos).Replace(s)
}

// materialize writes the case's settings files, expanded, into dir and
// returns the main file.
func (c ivsCase) materialize(t *testing.T, e ivsEnv, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(ivsDir, "cases", c.name+"*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		if base != c.name+".xml" && !strings.HasPrefix(base, c.name+"-") && !strings.HasPrefix(base, c.name+".properties") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, base), []byte(e.expand(string(data))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if c.linkIvyHome {
		if err := os.MkdirAll(filepath.Join(dir, "home", ".ivy2"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(e.repos, filepath.Join(dir, "home", ".ivy2", "local")); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, c.name+".xml")
}

// outcome renders a result as a golden: sorted "jar <file> <sha256>"
// lines, or "error".
func ivsOutcome(jars map[string]string, failed bool) string {
	if failed {
		return "error\n"
	}
	var lines []string
	for f, sum := range jars {
		lines = append(lines, "jar "+f+" "+sum)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

var ivsEnvMu sync.Mutex

// runPrebake resolves the case with prebake.
func (c ivsCase) runPrebake(t *testing.T, e ivsEnv) (string, string) {
	t.Helper()
	dir := t.TempDir()
	settings := c.materialize(t, e, dir)
	req := Request{Packages: []string{c.packages}, IvySettings: settings, CacheDir: filepath.Join(dir, "cache"), Home: filepath.Join(dir, "home")}
	if c.repos != "" {
		req.Repositories = []string{e.expand(c.repos)}
	}
	if c.exclude != "" {
		req.Excludes = []string{c.exclude}
	}
	ivsEnvMu.Lock()
	for _, kv := range c.env {
		os.Setenv(kv[0], e.expand(kv[1]))
	}
	log := &m2test.LogBuf{}
	res, err := Resolve(context.Background(), req, WithLogger(log), WithRetry(1, time.Millisecond))
	for _, kv := range c.env {
		os.Unsetenv(kv[0])
	}
	ivsEnvMu.Unlock()
	if err != nil {
		return ivsOutcome(nil, true), err.Error() + "\n" + log.String()
	}
	jars := map[string]string{}
	for _, a := range res.Lock.Artifacts {
		jars[a.File] = a.Sha256
	}
	lock, _ := res.Lock.Marshal()
	return ivsOutcome(jars, false), string(lock) + log.String()
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ivsDir, "cases", name+".expected"))
	if err != nil {
		t.Fatalf("%s: no golden (run TestIvySettingsSpark with PREBAKE_IVS_RECORD=1): %v", name, err)
	}
	return string(b)
}

// TestIvySettingsGoldens replays Spark's recorded answers against prebake,
// with Go file servers in place of nginx.
func TestIvySettingsGoldens(t *testing.T) {
	repos, _ := filepath.Abs(filepath.Join(ivsDir, "repos"))
	open := mavenhttp.New(repos)
	defer open.Close()
	private := mavenhttp.New(repos, mavenhttp.WithBasicAuth(ivsUser, ivsPass))
	defer private.Close()
	e := ivsEnv{url: open.URL(), private: private.URL(), host: "127.0.0.1", repos: repos}
	for _, c := range ivsCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got, detail := c.runPrebake(t, e)
			if os.Getenv("PREBAKE_IVS_SHOW") == "1" {
				t.Logf("prebake:\n%s\n%s", got, detail)
				return
			}
			want := readGolden(t, c.name)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("jars (-spark +prebake):\n%s\n%s", d, detail)
			}
			if strings.Contains(detail, ivsPass) {
				t.Errorf("the password is in the lock or the log:\n%s", detail)
			}
		})
	}
}

// TestIvySettingsSpark runs every case through the real spark-submit
// (two at a time) against nginx, and prebake against the same nginx.
func TestIvySettingsSpark(t *testing.T) {
	testenv.RequireIT(t)
	version := testenv.SparkVersions[0]
	if v := os.Getenv("PREBAKE_IVS_SPARK"); v != "" {
		version = v // e.g. 4.0.5, by hand: the goldens are 3.5.9's
	}
	sparkHome, pyPath := testenv.SparkHome(t, version)
	repos, _ := filepath.Abs(filepath.Join(ivsDir, "repos"))
	ng := mavenhttp.StartNginx(t, repos, ivsUser, ivsPass)
	e := ivsEnv{url: ng.URL, private: ng.PrivateURL, host: "127.0.0.1", repos: repos}
	record := os.Getenv("PREBAKE_IVS_RECORD") == "1"
	cases := ivsCases(t)
	spark := make([]string, len(cases))
	details := make([]string, len(cases))
	var g errgroup.Group
	g.SetLimit(2) // two JVMs on a 2-core machine
	for i, c := range cases {
		g.Go(func() error {
			spark[i], details[i] = c.runSpark(t, e, sparkHome, pyPath)
			return nil
		})
	}
	g.Wait()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if record {
				if err := os.WriteFile(filepath.Join(ivsDir, "cases", c.name+".expected"), []byte(spark[i]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if d := cmp.Diff(readGolden(t, c.name), spark[i]); d != "" {
				t.Errorf("spark-submit no longer matches the golden (-golden +spark):\n%s\n%s", d, details[i])
			}
			got, detail := c.runPrebake(t, e)
			if d := cmp.Diff(spark[i], got); d != "" {
				t.Errorf("jars (-spark +prebake):\n%s\n%s", d, detail)
			}
		})
	}
}

// runSpark submits a no-op application with the case's settings file and
// returns what Spark retrieved into <spark.jars.ivy>/jars.
func (c ivsCase) runSpark(t *testing.T, e ivsEnv, sparkHome, pyPath string) (string, string) {
	dir := t.TempDir()
	settings := c.materialize(t, e, dir)
	ivy, home, conf := filepath.Join(dir, "ivy"), filepath.Join(dir, "home"), filepath.Join(dir, "conf")
	for _, d := range []string{ivy, home, conf} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "harness: " + err.Error(), ""
		}
	}
	app := filepath.Join(dir, "noop.py")
	if err := os.WriteFile(app, []byte("# no-op\n"), 0o644); err != nil {
		return "harness: " + err.Error(), ""
	}
	args := []string{"--master", "local[1]", "--conf", "spark.ui.enabled=false",
		"--conf", "spark.jars.ivy=" + ivy, "--conf", "spark.jars.ivySettings=" + settings,
		"--packages", c.packages}
	if c.repos != "" {
		args = append(args, "--repositories", e.expand(c.repos))
	}
	if c.exclude != "" {
		args = append(args, "--exclude-packages", c.exclude)
	}
	args = append(args, app)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(sparkHome, "bin", "spark-submit"), args...)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "SPARK_HOME", "PYTHONPATH", "HOME", "SPARK_CONF_DIR", "SPARK_SUBMIT_OPTS", "DEFAULT_ARTIFACT_REPOSITORY", "PYSPARK_SUBMIT_ARGS", "_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "SPARK_HOME="+sparkHome, "PYTHONPATH="+pyPath, "PYSPARK_PYTHON=python3",
		"HOME="+home, "SPARK_CONF_DIR="+conf, "SPARK_LOCAL_IP=127.0.0.1",
		"SPARK_SUBMIT_OPTS=-Duser.home="+home+" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
	for _, kv := range c.env {
		env = append(env, kv[0]+"="+e.expand(kv[1]))
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		s := out.String()
		if strings.Contains(s, "unresolved dependency") || strings.Contains(s, "download failed") || strings.Contains(s, "Failed when loading Ivy settings") {
			return ivsOutcome(nil, true), s
		}
		return fmt.Sprintf("harness: spark-submit: %v", err), s
	}
	jars := map[string]string{}
	ents, err := os.ReadDir(filepath.Join(ivy, "jars"))
	if err != nil {
		return "harness: " + err.Error(), out.String()
	}
	for _, en := range ents {
		b, err := os.ReadFile(filepath.Join(ivy, "jars", en.Name()))
		if err != nil {
			return "harness: " + err.Error(), out.String()
		}
		sum := sha256.Sum256(b)
		jars[en.Name()] = hex.EncodeToString(sum[:])
	}
	return ivsOutcome(jars, false), out.String()
}
