package submit

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/testenv"
)

// shlexCases are checked against Go's ShlexSplit and, when python3 is on
// PATH, Python's own shlex.split (the splitter pyspark's launch_gateway
// uses).
var shlexCases = []struct {
	in   string
	want []string
	err  bool
}{
	{in: "--packages a:b:1 pyspark-shell", want: []string{"--packages", "a:b:1", "pyspark-shell"}},
	{in: "  --conf\t'spark.a=x y'\r\n pyspark-shell ", want: []string{"--conf", "spark.a=x y", "pyspark-shell"}},
	{in: `a "b\c\"d" e\ f '' g'h'"i"`, want: []string{"a", `b\c"d`, "e f", "", "ghi"}},
	{in: `"\\" '\' x`, want: []string{`\`, `\`, "x"}},
	{in: `--name 'it'"'"'s' pyspark-shell`, want: []string{"--name", "it's", "pyspark-shell"}},
	{in: `--conf "spark.x=$HOME" # not a comment`, want: []string{"--conf", "spark.x=$HOME", "#", "not", "a", "comment"}},
	{in: "", want: nil},
	{in: `'unterminated`, err: true},
	{in: `"unterminated`, err: true},
	{in: `trailing\`, err: true},
}

func TestShlexSplit(t *testing.T) {
	for _, tt := range shlexCases {
		got, err := ShlexSplit(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("ShlexSplit(%q) error %v; want error %v", tt.in, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ShlexSplit(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestShlexSplitPython: the same cases through Python's shlex.split, so
// the table is Python's behaviour, not a guess of it.
func TestShlexSplitPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	var ins []string
	for _, tt := range shlexCases {
		ins = append(ins, tt.in)
	}
	in, _ := json.Marshal(ins)
	// One python for every case (a pyenv shim costs seconds a start).
	out, err := exec.Command(py, "-c", "import shlex,sys,json\nfor s in json.loads(sys.argv[1]):\n try:\n  print(json.dumps(shlex.split(s)))\n except ValueError:\n  print('ERR')", string(in)).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(shlexCases) {
		t.Fatalf("python printed %d lines for %d cases: %q", len(lines), len(shlexCases), out)
	}
	for i, tt := range shlexCases {
		got := lines[i]
		if tt.err != (got == "ERR") {
			t.Errorf("python shlex.split(%q) = %s; want error %v", tt.in, got, tt.err)
		}
		if tt.err {
			continue
		}
		want, _ := ShlexSplit(tt.in)
		if got != jsonStrings(want) {
			t.Errorf("python shlex.split(%q) = %s; ShlexSplit gives %s", tt.in, got, jsonStrings(want))
		}
	}
}

func jsonStrings(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s))
		b.WriteByte('"')
	}
	b.WriteByte(']')
	return b.String()
}

func TestLoadPySparkSubmission(t *testing.T) {
	tests := []struct {
		name, value string
		want        []string
		wantErr     errdefs.Kind
	}{
		{name: "unset: pyspark's default", value: "", want: []string{"pyspark-shell"}},
		{name: "packages", value: "--master local[2] --packages a:b:1 pyspark-shell", want: []string{"--master", "local[2]", "--packages", "a:b:1", "pyspark-shell"}},
		{name: "no pyspark-shell", value: "--packages a:b:1", wantErr: errdefs.BadArgument},
		{name: "an app instead", value: "--packages a:b:1 app.py", wantErr: errdefs.BadArgument},
		{name: "unsplittable", value: "--name 'x pyspark-shell", wantErr: errdefs.BadArgument},
		{name: "cluster mode", value: "--master k8s://https://h:6443 --deploy-mode cluster pyspark-shell", wantErr: errdefs.BadArgument},
	}
	for _, tt := range tests {
		env := map[string]string{EnvPySparkSubmitArgs: tt.value}
		s, err := LoadPySparkSubmission(testenv.Environ(env))
		if tt.wantErr != errdefs.Unknown {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: error %v; want %v", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, s.Args()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		if !s.FromPySparkEnv() || s.Getenv(EnvPySparkSubmitArgs) != "" {
			t.Errorf("%s: FromPySparkEnv %v, getenv still has the variable %q", tt.name, s.FromPySparkEnv(), s.Getenv(EnvPySparkSubmitArgs))
		}
		r, err := s.Reload(s.Args())
		if err != nil || !r.FromPySparkEnv() {
			t.Errorf("%s: Reload lost FromPySparkEnv (%v)", tt.name, err)
		}
		back, err := ShlexSplit(s.PySparkSubmitArgs())
		if err != nil || !cmp.Equal(back, s.Args()) {
			t.Errorf("%s: PySparkSubmitArgs %q splits to %q (%v)", tt.name, s.PySparkSubmitArgs(), back, err)
		}
	}
}

// TestAppWarningsFix: each finding names file:line and its fix; when the
// rewrite resolved the same coordinates, the fix gives the jar list.
func TestAppWarningsFix(t *testing.T) {
	app := filepath.Join(t.TempDir(), "app.py")
	src := `from delta import configure_spark_with_delta_pip
from pyspark.sql import SparkSession

builder = (SparkSession.builder
    .config("spark.jars.packages", "org.postgresql:postgresql:42.7.1"))
spark = configure_spark_with_delta_pip(builder, extra_packages=["org.apache.hadoop:hadoop-aws:3.3.4"]).getOrCreate()
other = configure_spark_with_delta_pip(builder).getOrCreate()
def configure_spark_with_delta_pip(b, extra_packages=None):
    return b
`
	if err := os.WriteFile(app, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ParseArgv([]string{"pyspark-shell"})
	if err != nil {
		t.Fatal(err)
	}
	none := func(string) string { return "" }
	tests := []struct {
		name string
		fix  AppFix
		want []string
	}{
		{name: "not resolved", fix: AppFix{Apps: []string{app}}, want: []string{
			app + `:5: .config(...) sets spark.jars.packages=org.postgresql:postgresql:42.7.1, which Spark resolves at run time when the app starts its own JVM (this rewrite cannot remove it); delete that setting and give it to prebake instead (prebake rewrite --packages org.postgresql:postgresql:42.7.1 -- …)`,
			app + ":6: configure_spark_with_delta_pip(...) sets spark.jars.packages=io.delta:delta-spark_2.12:VERSION,org.apache.hadoop:hadoop-aws:3.3.4, which Spark resolves at run time when the app starts its own JVM (this rewrite cannot remove it); build the session from the builder it wraps (drop the helper) and give prebake the packages instead (prebake rewrite --packages io.delta:delta-spark_2.12:VERSION,org.apache.hadoop:hadoop-aws:3.3.4 -- …; VERSION is `pip show delta-spark`'s)",
			app + ":7: configure_spark_with_delta_pip(...) sets spark.jars.packages=io.delta:delta-spark_2.12:VERSION, which Spark resolves at run time when the app starts its own JVM (this rewrite cannot remove it); build the session from the builder it wraps (drop the helper) and give prebake the packages instead (prebake rewrite --packages io.delta:delta-spark_2.12:VERSION -- …; VERSION is `pip show delta-spark`'s)",
		}},
		{name: "resolved", fix: AppFix{Apps: []string{app}, Packages: "org.postgresql:postgresql:42.7.1,io.delta:delta-spark_2.12:3.2.0,org.apache.hadoop:hadoop-aws:3.3.4", Jars: "/c/p.jar,/c/d.jar"}, want: []string{
			app + `:5: .config(...) sets spark.jars.packages=org.postgresql:postgresql:42.7.1, which Spark resolves at run time when the app starts its own JVM (this rewrite cannot remove it); delete that setting: the rewritten jar list already holds its jars; where the app runs without prebake, set .config("spark.jars", "/c/p.jar,/c/d.jar") there instead`,
			app + ":6: configure_spark_with_delta_pip(...) sets spark.jars.packages=io.delta:delta-spark_2.12:VERSION,org.apache.hadoop:hadoop-aws:3.3.4, which Spark resolves at run time when the app starts its own JVM (this rewrite cannot remove it); build the session from the builder it wraps (drop the helper): the rewritten jar list already holds io.delta:delta-spark_2.12:3.2.0 (--jars/spark.jars /c/p.jar,/c/d.jar)",
			app + ":7: configure_spark_with_delta_pip(...) sets spark.jars.packages=io.delta:delta-spark_2.12:VERSION, which Spark resolves at run time when the app starts its own JVM (this rewrite cannot remove it); build the session from the builder it wraps (drop the helper): the rewritten jar list already holds io.delta:delta-spark_2.12:3.2.0 (--jars/spark.jars /c/p.jar,/c/d.jar)",
		}},
	}
	for _, tt := range tests {
		got := UnreachableWarnings(none, a, tt.fix)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
