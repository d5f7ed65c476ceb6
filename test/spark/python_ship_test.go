package spark

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
	"github.com/prebake/prebake/internal/testenv"
)

// wheelsApp imports a pure wheel and a manylinux wheel (a C extension) on
// the driver and in the Python workers (an RDD map and a SQL UDF).
const wheelsApp = `import os
import prebake_pure, prebake_fast
from pyspark.sql import SparkSession
from pyspark.sql.functions import udf
spark = SparkSession.builder.appName("prebake-wheels").getOrCreate()
print("DRIVER: %s %d" % (prebake_pure.GREETING, prebake_fast.twice(21)), flush=True)
def f(x):
    import prebake_pure, prebake_fast
    return "%s-%d" % (prebake_pure.GREETING, prebake_fast.twice(x))
print("RDD: %s" % ",".join(spark.sparkContext.parallelize([1, 2, 3], 2).map(f).collect()), flush=True)
g = udf(f)
print("UDF: %s" % ",".join(r[0] for r in spark.range(1, 4).select(g("id")).orderBy("id").collect()), flush=True)
spark.stop()
`

// fastC is prebake_fast's native module: twice(x) = 2x.
const fastC = `#define PY_SSIZE_T_CLEAN
#include <Python.h>
static PyObject *twice(PyObject *self, PyObject *args) {
	long x;
	if (!PyArg_ParseTuple(args, "l", &x)) return NULL;
	return PyLong_FromLong(2 * x);
}
static PyMethodDef methods[] = {{"twice", twice, METH_VARARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_fast", NULL, -1, methods};
PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&mod); }
`

// pyTarget is the python3 Spark runs here: its version (3.11), include
// directory, extension suffix, glibc and machine.
type pyTarget struct {
	version, include, extSuffix, glibc, machine string
}

func localPython(t *testing.T, env []string) pyTarget {
	t.Helper()
	cmd := exec.Command("python3", "-c", `import sys, sysconfig, platform
print("%d.%d" % sys.version_info[:2]); print(sysconfig.get_paths()["include"]); print(sysconfig.get_config_var("EXT_SUFFIX")); print(platform.libc_ver()[1]); print(platform.machine())`)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		testenv.Skip(t, "no python3 to run the app: "+err.Error())
	}
	f := strings.Fields(string(out))
	if len(f) != 5 || f[3] == "" {
		t.Fatalf("python3 says %q", out)
	}
	return pyTarget{f[0], f[1], f[2], f[3], f[4]}
}

// TestLocalPythonWheels: `prebake submit --py-requirements` in local mode
// with the real spark-submit: the lock's two wheels (a pure one and a
// manylinux one with a C extension built here) are unpacked into the
// cache and imported by the driver and by the Python workers (an RDD map
// and a SQL UDF), with the index closed at run time (the lock and the
// cache hold everything) and nothing installed. The same run through
// prebake installed as spark-submit (what Airflow's SparkSubmitOperator
// runs) takes the Python input from $PREBAKE_PY_REQUIREMENTS and the
// target from the python3 that runs the driver.
func TestLocalPythonWheels(t *testing.T) {
	testenv.RequireIT(t)
	if runtime.GOOS != "linux" {
		testenv.Skip(t, "manylinux wheels run on Linux")
	}
	env, home := sparkEnv(t)
	py := localPython(t, env)
	dir := t.TempDir()

	// The native module, built for this python3.
	src := filepath.Join(dir, "fast.c")
	os.WriteFile(src, []byte(fastC), 0o644)
	so := filepath.Join(dir, "_fast"+py.extSuffix)
	if out, err := exec.Command("cc", "-shared", "-fPIC", "-O1", "-I", py.include, "-o", so, src).CombinedOutput(); err != nil {
		testenv.Skip(t, fmt.Sprintf("no C compiler for the native wheel: %v\n%s", err, out))
	}
	soBytes, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	cp := "cp" + strings.ReplaceAll(py.version, ".", "")
	plat := "manylinux_2_17_" + py.machine
	type wf = sitepkgstest.File
	pure := sitepkgstest.WheelTagged(t, "prebake_pure", "1.0", "py3-none-any", true, wf{Name: "prebake_pure/__init__.py", Body: "GREETING = 'hi'\n"})
	native := sitepkgstest.WheelTagged(t, "prebake_fast", "1.0", cp+"-"+cp+"-"+plat, false, wf{Name: "prebake_fast/__init__.py", Body: "from ._fast import twice\n"},
		wf{Name: "prebake_fast/_fast" + py.extSuffix, Body: string(soBytes), Mode: 0o755})
	pureFile, nativeFile := "prebake_pure-1.0-py3-none-any.whl", "prebake_fast-1.0-"+cp+"-"+cp+"-"+plat+".whl"
	ix := sitepkgstest.NewIndex()
	defer ix.Close()
	ix.Add("prebake-pure", pureFile, pure)
	ix.Add("prebake-fast", nativeFile, native)
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	reqs := filepath.Join(dir, "requirements.txt")
	os.WriteFile(reqs, []byte("prebake-pure==1.0 --hash=sha256:"+sum(pure)+"\nprebake-fast==1.0 --hash=sha256:"+sum(native)+"\n"), 0o644)
	app := filepath.Join(dir, "wheels_app.py")
	os.WriteFile(app, []byte(wheelsApp), 0o644)
	lockPath := filepath.Join(dir, "prebake.lock")
	target := "manylinux_" + strings.ReplaceAll(py.glibc, ".", "_") + "_" + py.machine
	env = append(env, "PIP_CONFIG_FILE="+os.DevNull, "PIP_INDEX_URL="+ix.URL+"/simple/", "PIP_EXTRA_INDEX_URL=", "PIP_FIND_LINKS=", "PIP_NO_INDEX=", "PREBAKE_UV=")
	pyFlags := []string{"--py-requirements", reqs, "--python-version", py.version, "--python-platform", target}

	r := prebake(t, env, append([]string{"resolve", "-o", "names", "--lock", lockPath}, pyFlags...)...)
	if r.code != 0 || !strings.Contains(r.stdout, nativeFile) || !strings.Contains(r.stdout, pureFile) {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("resolve: %d index requests", ix.Requests.Load())
	// Run time: the index is a closed port.
	ix.Close()

	check := func(name string, r result) {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, r.code, r.stdout, r.stderr)
		}
		out := r.stdout + r.stderr
		for _, want := range []string{"DRIVER: hi 42", "RDD: hi-2,hi-4,hi-6", "UDF: hi-2,hi-4,hi-6"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", name, want, out)
			}
		}
		if strings.Contains(out, "pip install") || strings.Contains(out, "Collecting ") {
			t.Errorf("%s: something installed at run time:\n%s", name, out)
		}
	}
	r = prebake(t, env, append(append([]string{"submit", "--frozen", "--lock", lockPath}, pyFlags...), "--",
		"--master", "local[2]", "--conf", "spark.ui.enabled=false", app)...)
	check("submit", r)
	sites, _ := filepath.Glob(filepath.Join(home, "prebake-cache", "python", "site-packages", "*", "prebake_fast", "_fast*"))
	if len(sites) != 1 {
		t.Errorf("the cache's unpacked trees: %v, want one with prebake_fast", sites)
	}

	// prebake as spark-submit: no prebake flag; prebake.yaml's keys by
	// their variables.
	link := filepath.Join(dir, "bin", "spark-submit")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(prebakeBin, link); err != nil {
		t.Fatal(err)
	}
	// The target: this host's python3, which runs the driver (the
	// lock's, or --frozen would fail).
	linkEnv := append(append([]string{}, env...), "PREBAKE_PY_REQUIREMENTS="+reqs, "PREBAKE_LOCK="+lockPath, "PREBAKE_FROZEN=true")
	cmd := exec.Command(link, "--master", "local[2]", "--conf", "spark.ui.enabled=false", app)
	cmd.Env = linkEnv
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	check("as spark-submit", result{code, stdout.String(), stderr.String()})
	if want := "python " + py.version + ", " + target + " (target from this host's python3)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("as spark-submit: stderr lacks %q:\n%s", want, stderr.String())
	}
}
