package submit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPyConfigPackages(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []pyFinding
	}{
		{name: "builder positional", src: "spark = SparkSession.builder \\\n    .appName('x') \\\n    .config(\"spark.jars.packages\", \"org.postgresql:postgresql:42.7.1\") \\\n    .getOrCreate()\n",
			want: []pyFinding{{Line: 3, Key: "spark.jars.packages", Value: "org.postgresql:postgresql:42.7.1", Literal: true, Via: ".config(...)", Flag: "--packages"}}},
		{name: "keywords", src: "b = SparkSession.builder.config(value='a:b:1', key='spark.jars.packages')\n",
			want: []pyFinding{{Line: 1, Key: "spark.jars.packages", Value: "a:b:1", Literal: true, Via: ".config(...)", Flag: "--packages"}}},
		{name: "key keyword, computed value", src: "SparkSession.builder.config(key=\"spark.jars.repositories\", value=os.environ['REPO'])\n",
			want: []pyFinding{{Line: 1, Key: "spark.jars.repositories", Via: ".config(...)", Flag: "--repositories"}}},
		{name: "implicit concatenation and triple quotes", src: "(SparkSession.builder\n .config('''spark.jars.packages''',\n         'io.delta:delta-spark_2.12:3.1.0,'\n         \"org.postgresql:postgresql:42.7.1\"))\n",
			want: []pyFinding{{Line: 2, Key: "spark.jars.packages", Value: "io.delta:delta-spark_2.12:3.1.0,org.postgresql:postgresql:42.7.1", Literal: true, Via: ".config(...)", Flag: "--packages"}}},
		{name: "map dict", src: "SparkSession.builder.config(map={\"spark.sql.shuffle.partitions\": \"4\", \"spark.jars.packages\": \"a:b:1\"})\n",
			want: []pyFinding{{Line: 1, Key: "spark.jars.packages", Value: "a:b:1", Literal: true, Via: ".config(...)", Flag: "--packages"}}},
		{name: "SparkConf set and setAll", src: "conf = SparkConf().set('spark.jars.excludes', 'org.slf4j:*')\nconf.setAll([('spark.app.name', 'x'), ('spark.jars.packages', 'a:b:1')])\n",
			want: []pyFinding{
				{Line: 1, Key: "spark.jars.excludes", Value: "org.slf4j:*", Literal: true, Via: ".set(...)", Flag: "--exclude-packages"},
				{Line: 2, Key: "spark.jars.packages", Value: "a:b:1", Literal: true, Via: ".setAll(...)", Flag: "--packages"}}},
		{name: "f-string value is computed", src: "v = '1'\nSparkSession.builder.config('spark.jars.packages', f'a:b:{v}')\n",
			want: []pyFinding{{Line: 2, Key: "spark.jars.packages", Via: ".config(...)", Flag: "--packages"}}},
		{name: "os.environ PYSPARK_SUBMIT_ARGS", src: "import os\nos.environ[\"PYSPARK_SUBMIT_ARGS\"] = '--packages org.apache.hadoop:hadoop-aws:3.3.4 pyspark-shell'\n",
			want: []pyFinding{{Line: 2, Key: "PYSPARK_SUBMIT_ARGS", Value: "--packages org.apache.hadoop:hadoop-aws:3.3.4", Literal: true, Via: "os.environ", Flag: "--packages org.apache.hadoop:hadoop-aws:3.3.4"}}},
		{name: "os.environ.setdefault with --conf", src: "os.environ.setdefault('PYSPARK_SUBMIT_ARGS', '--conf spark.jars.packages=a:b:1 pyspark-shell')\n",
			want: []pyFinding{{Line: 1, Key: "PYSPARK_SUBMIT_ARGS", Value: "spark.jars.packages=a:b:1", Literal: true, Via: "os.environ", Flag: "--packages a:b:1"}}},
		// Not findings: mentions in comments, docstrings, other keys, other strings.
		{name: "comment", src: "# .config(\"spark.jars.packages\", \"a:b:1\")\nspark = SparkSession.builder.getOrCreate()\n"},
		{name: "docstring", src: "def f():\n    \"\"\"Set .config('spark.jars.packages', 'a:b:1') to add jars.\"\"\"\n"},
		{name: "other key", src: "SparkSession.builder.config('spark.jars', 'a.jar').config('spark.jars.ivy', '/tmp/ivy')\n"},
		{name: "key printed", src: "print('spark.jars.packages', 'is not set here')\nlog.info(\"--packages\")\n"},
		{name: "PYSPARK_SUBMIT_ARGS without packages", src: "os.environ['PYSPARK_SUBMIT_ARGS'] = '--master local[2] pyspark-shell --packages-are-app-args'\n"},
		{name: "string with parens", src: "x = foo.config('(', ')')\nSparkSession.builder.config('spark.jars.packages', 'a:b:1')\n",
			want: []pyFinding{{Line: 2, Key: "spark.jars.packages", Value: "a:b:1", Literal: true, Via: ".config(...)", Flag: "--packages"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pyConfigPackages([]byte(tt.src))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pyConfigPackages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvPackages(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"PYSPARK_SUBMIT_ARGS", "--packages org.apache.hadoop:hadoop-aws:3.3.4 pyspark-shell", "--packages org.apache.hadoop:hadoop-aws:3.3.4"},
		{"PYSPARK_SUBMIT_ARGS", "--master local[2] --packages=a:b:1 --repositories 'https://u:p@repo.example/m2' pyspark-shell", "--packages a:b:1 --repositories https://repo.example/m2"},
		{"PYSPARK_SUBMIT_ARGS", `--conf "spark.jars.packages=a:b:1" -c spark.jars.excludes=x:y pyspark-shell`, "spark.jars.packages=a:b:1 spark.jars.excludes=x:y"},
		{"PYSPARK_SUBMIT_ARGS", "--conf spark.jars.ivy=/tmp pyspark-shell", ""},
		{"PYSPARK_SUBMIT_ARGS", "pyspark-shell --packages a:b:1", ""},
		{"PYSPARK_SUBMIT_ARGS", "--name --packages-demo pyspark-shell", ""},
		{"SPARK_SUBMIT_OPTS", "-Xmx1g -Dspark.jars.packages=a:b:1 -Dfoo=spark.jars.packages", "-Dspark.jars.packages=a:b:1"},
		{"OTHER", "--packages a:b:1", ""},
	}
	for _, tt := range tests {
		if got := EnvPackages(tt.name, tt.value); got != tt.want {
			t.Errorf("EnvPackages(%s, %q) = %q; want %q", tt.name, tt.value, got, tt.want)
		}
	}
}

func TestUnreachableWarnings(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.py")
	src := "# .config('spark.jars.packages', 'in a comment')\nspark = SparkSession.builder.config('spark.jars.packages', 'org.postgresql:postgresql:42.7.1').getOrCreate()\n"
	if err := os.WriteFile(app, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ParseArgv([]string{"--master", "local[2]", app})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PYSPARK_SUBMIT_ARGS": "--packages a:b:1 pyspark-shell", "SPARK_SUBMIT_OPTS": "-Dspark.jars.repositories=https://x:y@repo"}
	got := UnreachableWarnings(func(k string) string { return env[k] }, a, AppFix{})
	if len(got) != 3 {
		t.Fatalf("got %d warnings, want 3: %q", len(got), got)
	}
	for i, want := range []string{
		"$PYSPARK_SUBMIT_ARGS sets --packages a:b:1", "(prebake rewrite --packages a:b:1 -- …)",
		"$SPARK_SUBMIT_OPTS sets -Dspark.jars.repositories=https://repo", "(prebake rewrite --repositories https://repo -- …)",
		app + ":2: .config(...) sets spark.jars.packages=org.postgresql:postgresql:42.7.1", "(prebake rewrite --packages org.postgresql:postgresql:42.7.1 -- …)",
	} {
		if !strings.Contains(got[i/2], want) {
			t.Errorf("warning %d %q lacks %q", i/2, got[i/2], want)
		}
	}
	for _, w := range got {
		if strings.Contains(w, "x:y@") {
			t.Errorf("warning leaks credentials: %q", w)
		}
	}
	// The old substring match also fired on comments: a clean app warns nothing.
	if err := os.WriteFile(app, []byte("# spark.jars.packages is given by prebake\nspark = SparkSession.builder.getOrCreate()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := UnreachableWarnings(func(string) string { return "" }, a, AppFix{}); len(got) != 0 {
		t.Errorf("clean app: got warnings %q", got)
	}
}

// TestUnreachableWarningsQuoted is audit 3 N9: the prebake command a warning
// suggests is shell-quoted (its values come from the environment or the app).
func TestUnreachableWarningsQuoted(t *testing.T) {
	a, err := ParseArgv([]string{"--master", "local[2]", "app.jar"})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PYSPARK_SUBMIT_ARGS": `--packages 'a:b:1$(touch /tmp/INJ)' pyspark-shell`, "SPARK_SUBMIT_OPTS": "-Dspark.jars.repositories=https://repo/a[1]"}
	got := UnreachableWarnings(func(k string) string { return env[k] }, a, AppFix{})
	want := []string{
		"$PYSPARK_SUBMIT_ARGS sets --packages a:b:1$(touch /tmp/INJ), which this rewrite cannot remove: drop it from $PYSPARK_SUBMIT_ARGS and give it to prebake instead (prebake rewrite --packages 'a:b:1$(touch /tmp/INJ)' -- …)",
		"$SPARK_SUBMIT_OPTS sets -Dspark.jars.repositories=https://repo/a[1], which this rewrite cannot remove: drop it from $SPARK_SUBMIT_OPTS and give it to prebake instead (prebake rewrite --repositories 'https://repo/a[1]' -- …)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	app := filepath.Join(t.TempDir(), "app.py")
	src := "import os\nos.environ['PYSPARK_SUBMIT_ARGS'] = '--packages \"a:b:1 $(id)\" pyspark-shell'\n" +
		"spark = SparkSession.builder.config('spark.jars.packages', 'c:d:2;$(id)').getOrCreate()\n"
	if err := os.WriteFile(app, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err = ParseArgv([]string{"--master", "local[2]", app}); err != nil {
		t.Fatal(err)
	}
	got = UnreachableWarnings(func(string) string { return "" }, a, AppFix{})
	for i, want := range []string{"(prebake rewrite --packages 'a:b:1 $(id)' -- …)", "(prebake rewrite --packages 'c:d:2;$(id)' -- …)"} {
		if len(got) != 2 || !strings.Contains(got[i], want) {
			t.Errorf("app warnings %q: want %q in warning %d", got, want, i)
		}
	}
}
