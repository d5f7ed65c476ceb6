package rewrite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/submit"
)

// TestPlanPython: what each deploy mode gets for the lock's wheels.
func TestPlanPython(t *testing.T) {
	store := &Python{Wheels: 2, From: "store s3://b/p", Conf: [][2]string{
		{"spark.archives", "s3a://b/p/archives/sha256/ab/site-packages.tar.gz#pydeps"},
		{"spark.executorEnv.PYTHONPATH", "./pydeps"},
	}}
	withLocal := func(p Python) *Python { p.LocalDir = "/cache/python/site-packages/k"; return &p }
	for _, c := range []struct {
		name    string
		argv    []string
		env     []string
		py      *Python
		want    []string // the rewritten argv
		wantEnv map[string]string
		warn    string // a warning that must be there
		err     error
	}{
		{name: "local", argv: []string{"--master", "local[2]", "app.py"}, py: withLocal(Python{Wheels: 2}),
			want:    []string{"--master", "local[2]", "--conf", "spark.executorEnv.PYTHONPATH=/cache/python/site-packages/k", "app.py"},
			wantEnv: map[string]string{"PYTHONPATH": "/cache/python/site-packages/k"}},
		{name: "local, user PYTHONPATH kept", argv: []string{"--master", "local[2]", "app.py"}, env: []string{"PYTHONPATH=/opt/pyspark"}, py: withLocal(Python{Wheels: 2}),
			want:    []string{"--master", "local[2]", "--conf", "spark.executorEnv.PYTHONPATH=/cache/python/site-packages/k", "app.py"},
			wantEnv: map[string]string{"PYTHONPATH": "/opt/pyspark:/cache/python/site-packages/k"}, warn: "$PYTHONPATH /opt/pyspark is kept"},
		{name: "k8s cluster, store", argv: []string{"--master", "k8s://https://k:6443", "--deploy-mode", "cluster", "--conf", "spark.archives=s3a://x/e.tgz#e", "local:///app.py"}, py: store,
			want: []string{"--master", "k8s://https://k:6443", "--deploy-mode", "cluster", "--conf", "spark.archives=s3a://x/e.tgz#e,s3a://b/p/archives/sha256/ab/site-packages.tar.gz#pydeps",
				"--conf", "spark.executorEnv.PYTHONPATH=./pydeps", "local:///app.py"}, warn: "spark.archives: the user's s3a://x/e.tgz#e is kept"},
		{name: "k8s cluster, image", argv: []string{"--master", "k8s://https://k:6443", "--deploy-mode", "cluster", "local:///app.py"}, py: &Python{Wheels: 2, InImage: true, From: "image r/i:1"},
			want: []string{"--master", "k8s://https://k:6443", "--deploy-mode", "cluster", "local:///app.py"}},
		{name: "k8s cluster, no target", argv: []string{"--master", "k8s://https://k:6443", "--deploy-mode", "cluster", "local:///app.py"}, py: &Python{Wheels: 2}, err: ErrNoClusterJars},
		{name: "standalone client, store", argv: []string{"--master", "spark://m:7077", "app.py"}, py: withLocal(*store),
			want:    []string{"--master", "spark://m:7077", "--conf", "spark.archives=s3a://b/p/archives/sha256/ab/site-packages.tar.gz#pydeps", "--conf", "spark.executorEnv.PYTHONPATH=./pydeps", "app.py"},
			wantEnv: map[string]string{"PYTHONPATH": "/cache/python/site-packages/k"}},
		{name: "standalone client, no target", argv: []string{"--master", "spark://m:7077", "app.py"}, py: withLocal(Python{Wheels: 1}),
			want: []string{"--master", "spark://m:7077", "app.py"}, wantEnv: map[string]string{"PYTHONPATH": "/cache/python/site-packages/k"}, warn: "the executors get none"},
		{name: "user --archives flag merged in place", argv: []string{"--master", "yarn", "--deploy-mode", "cluster", "--archives", "a.tgz#a", "app.py"}, py: store,
			want: []string{"--master", "yarn", "--deploy-mode", "cluster", "--archives", "a.tgz#a,s3a://b/p/archives/sha256/ab/site-packages.tar.gz#pydeps", "--conf", "spark.executorEnv.PYTHONPATH=./pydeps", "app.py"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := append([]string{"SPARK_CONF_DIR=" + t.TempDir()}, c.env...)
			sub, err := submit.LoadSubmission(c.argv, env)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Apply(context.Background(), sub, &Jars{Python: c.py}, WithWorkDir(t.TempDir()))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, r.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantEnv, r.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if v, ok := c.wantEnv["PYTHONPATH"]; ok && r.Submission.Getenv("PYTHONPATH") != v {
				t.Errorf("the rewritten submission's PYTHONPATH = %q, want %q", r.Submission.Getenv("PYTHONPATH"), v)
			}
			if c.warn != "" && !strings.Contains(strings.Join(texts(r.Warnings), "\n"), c.warn) {
				t.Errorf("warnings %q lack %q", texts(r.Warnings), c.warn)
			}
		})
	}
}

func texts(ws []Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Text)
	}
	return out
}

// TestPyInstalls: what installs packages at run time, or sets what ships
// them, is found with its line; the rest is not.
func TestPyInstalls(t *testing.T) {
	src := `import os, subprocess, sys
subprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])
os.system("pip install -q pandas==2.0")
# pip install in a comment is not code
import pip
pip.main(["install", "x"])
%pip install y
import ensurepip
spark = SparkSession.builder.config("spark.archives", "env.tgz#env").getOrCreate()
os.environ["PYSPARK_PYTHON"] = "./env/bin/python"
print("install pip later")
subprocess.run("python3 -m pip install z", shell=True)
`
	var got []string
	for _, f := range pyInstalls([]byte(src)) {
		got = append(got, strings.SplitN(f.what, " (", 2)[0]+" @"+itoa(f.line))
	}
	want := []string{
		"it installs packages at run time @2",
		"it installs packages at run time @3",
		"it installs packages at run time @6",
		"it installs packages at run time @7",
		"it installs pip at run time @8",
		"it sets spark.archives itself @9",
		"it sets PYSPARK_PYTHON itself @10",
		"it installs packages at run time @12",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestPyInstallsWarned: the warnings name file:line, for the primary
// resource and the .py files of --py-files; a missing or remote file is
// skipped silently; a job without wheels is not checked.
func TestPyInstallsWarned(t *testing.T) {
	dir := t.TempDir()
	app, helper := filepath.Join(dir, "app.py"), filepath.Join(dir, "helper.py")
	os.WriteFile(app, []byte("import os\nos.system('pip install x')\n"), 0o644)
	os.WriteFile(helper, []byte("\n\nimport ensurepip\n"), 0o644)
	argv := []string{"--master", "local[1]", "--py-files", helper + ",s3a://b/remote.py," + filepath.Join(dir, "missing.py"), app}
	sub, err := submit.LoadSubmission(argv, []string{"SPARK_CONF_DIR=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Apply(context.Background(), sub, &Jars{Python: &Python{Wheels: 1, LocalDir: "/c/site"}}, WithWorkDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range texts(r.Warnings) {
		got = append(got, strings.SplitN(w, ";", 2)[0])
	}
	want := []string{app + ":2: it installs packages at run time (pip install)", helper + ":3: it installs pip at run time (ensurepip)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	r, err = Apply(context.Background(), sub, nil, WithWorkDir(t.TempDir()))
	if err != nil || len(r.Warnings) != 0 {
		t.Errorf("no wheels: %v, warnings %q", err, texts(r.Warnings))
	}
}
