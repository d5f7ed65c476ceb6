package rewrite

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/prebake/prebake/submit"
)

var (
	fuzzValues = []string{"", "a", "two words", "it's", `"dq"`, "k=v=w", "a,b", " lead", "trail ", "ünï", "$HOME", "*", "--packages", "-v", "x\ny", "spark.jars.packages=x:y:1"}
	fuzzPlain  = []string{"--class", "--name", "--executor-memory", "--driver-memory", "--files", "--archives", "--num-executors", "--queue", "--proxy-user", "--driver-java-options", "--driver-library-path", "--total-executor-cores", "--executor-cores", "--keytab", "--principal", "--driver-cores"}
	fuzzKeys   = []string{"spark.executor.instances", "spark.app.name", "spark.sql.extensions", "spark.hadoop.fs.s3a.secret.key", "spark.kubernetes.namespace", "weird key", "spark.jars.packagesX", "spark.jars.ivy.extra"}
	fuzzDeps   = []string{"--packages", "--repositories", "--exclude-packages", "--jars", "--py-files", "--driver-class-path"}
	fuzzDepKey = []string{"spark.jars.packages", "spark.jars.repositories", "spark.jars.excludes", "spark.jars.ivy", "spark.jars.ivySettings", "spark.jars", "spark.submit.pyFiles", "spark.driver.extraClassPath", "spark.kubernetes.container.image", "spark.kubernetes.driver.container.image"}
	fuzzMaster = []string{"local[*]", "yarn", "k8s://https://10.0.0.1:6443", "spark://m:7077", "mesos://m:5050", "local-cluster[2,1,1024]"}
	fuzzPrim   = []string{"app.jar", "app.py", "spark-internal", "pyspark-shell", "local:///opt/app.jar", "s3a://b/app.py", "app.R"}
)

// randomArgv builds a valid spark-submit command line from r.
func randomArgv(r *rand.Rand) []string {
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	var args []string
	add := func(name, value string) {
		if value != "" && !strings.ContainsAny(value, "\n") && r.IntN(3) == 0 {
			args = append(args, name+"="+value)
			return
		}
		args = append(args, name, value)
	}
	n := r.IntN(12)
	for i := 0; i < n; i++ {
		switch r.IntN(8) {
		case 0, 1:
			add(pick(fuzzPlain), pick(fuzzValues))
		case 2:
			c := "--conf"
			if r.IntN(4) == 0 {
				c = "-c"
				args = append(args, c, pick(fuzzKeys)+"="+pick(fuzzValues))
				continue
			}
			add(c, pick(fuzzKeys)+"="+pick(fuzzValues))
		case 3:
			pkg := []string{"org.postgresql:postgresql:42.7.1", "a:b:1,c:d:2", "g/a:1"}
			if r.IntN(2) == 0 {
				add("--packages", pick(pkg))
			} else {
				add(pick(fuzzDeps), pick(fuzzValues))
			}
		case 4:
			add("--conf", pick(fuzzDepKey)+"="+pick(fuzzValues))
		case 5:
			add("--master", pick(fuzzMaster))
		case 6:
			add("--deploy-mode", pick([]string{"client", "cluster"}))
		case 7:
			args = append(args, pick([]string{"--verbose", "-v", "--supervise"}))
		}
	}
	args = append(args, pick(fuzzPrim))
	for i := r.IntN(5); i > 0; i-- {
		args = append(args, pick(fuzzValues))
	}
	return args
}

func checkRandomRewrite(t *testing.T, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	args := randomArgv(r)
	var environ []string
	res, err := applyArgsIn(context.Background(), environ, args, WithJarSource(fakeRewriteJars("image")), WithImage("reg/img:1"), WithWorkDir(t.TempDir()))
	if err != nil {
		t.Fatalf("seed %d: Apply(%q): %v", seed, args, err)
	}
	checkRewriteResult(t, args, res, environ)
}

// TestRewriteProperty: on random command lines, every dependency-unrelated
// argument survives, in order, with the same value; no packages key is
// left in any source; --jars and spark.jars are never both set.
func TestRewriteProperty(t *testing.T) {
	n := uint64(3000)
	if testing.Short() {
		n = 300
	}
	for seed := uint64(0); seed < n; seed++ {
		checkRandomRewrite(t, seed)
		if t.Failed() {
			return
		}
	}
}

func FuzzRewrite(f *testing.F) {
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b [8]byte
		copy(b[:], data)
		checkRandomRewrite(t, binary.LittleEndian.Uint64(b[:]))
	})
}

// TestShellQuoteRoundTrip: the text output, read back by a POSIX shell,
// gives the same argv.
func TestShellQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	args := []string{"plain", "", "two words", "it's", `"dq"`, "$HOME", "*", "a\nb", "ünï", "--conf", "k=v w", "~", "back\\slash", "semi;colon", "amp&", "`tick`"}
	out, err := exec.Command(sh, "-c", "printf '%s\\0' "+submit.ShellQuote(args)).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(args, "|") {
		t.Errorf("round trip: got %q, want %q", got, args)
	}
}
