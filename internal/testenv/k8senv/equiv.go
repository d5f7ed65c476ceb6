package k8senv

import (
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/submit/k8s/native/nativetest"
)

// EquivDir is where the native equivalence goldens and the cases' files
// live (submit/k8s/native/testdata/equiv), under the module root.
func EquivDir(t testing.TB) string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "submit", "k8s", "native", "testdata", "equiv")
}

// Recorder collects the object bodies sent to the API server, by
// namespace (a FaultProxy's OnWrite).
type Recorder struct {
	mu   sync.Mutex
	objs map[string][]map[string]any
}

var objectPath = regexp.MustCompile(`^/(?:api/v1|apis/networking\.k8s\.io/v1)/namespaces/([^/]+)/(pods|services|configmaps|persistentvolumeclaims|networkpolicies)(/[^/]+)?$`)

// Record keeps body when path is an object of a namespace.
func (w *Recorder) Record(method, path string, body []byte) {
	m := objectPath.FindStringSubmatch(path)
	if m == nil {
		return
	}
	var obj map[string]any
	if err := yaml.Unmarshal(body, &obj); err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.objs == nil {
		w.objs = map[string][]map[string]any{}
	}
	w.objs[m[1]] = append(w.objs[m[1]], obj)
}

// Take returns the bodies recorded for ns, in the order sent, and forgets
// them.
func (w *Recorder) Take(ns string) []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.objs[ns]
	delete(w.objs, ns)
	return out
}

// Equiv is the native equivalence tests' world: the shared API server,
// a proxy in front of it recording what each submitter sends (Rec), the
// submission's CA and token files in Tmp, the cases' files (Files), a
// client through the proxy (Native) and the cases' placeholders (Repl:
// nativetest.Master, TestData, Tmp).
type Equiv struct {
	C      *Cluster
	Proxy  *FaultProxy
	Rec    *Recorder
	Tmp    string
	Files  string
	Native kubernetes.Interface
	Repl   map[string]string
}

// NewEquiv sets up the equivalence world on the shared API server.
func NewEquiv(t testing.TB) *Equiv {
	t.Helper()
	c := Shared(t)
	e := &Equiv{C: c, Rec: &Recorder{}, Tmp: t.TempDir(), Files: filepath.Join(EquivDir(t), "files")}
	e.Proxy = StartFaultProxy(t, c, nil)
	e.Proxy.OnWrite(e.Rec.Record)
	ca, err := os.ReadFile(e.Proxy.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, filepath.Join(e.Tmp, "ca.crt"), string(ca))
	testenv.WriteFile(t, filepath.Join(e.Tmp, "token"), c.AdminToken)
	e.Native = kubernetes.NewForConfigOrDie(&rest.Config{Host: e.Proxy.URL, BearerToken: c.AdminToken,
		TLSClientConfig: rest.TLSClientConfig{CAFile: e.Proxy.CAFile}, QPS: -1,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	e.Repl = map[string]string{nativetest.Master: e.Proxy.URL, nativetest.TestData: e.Files, nativetest.Tmp: e.Tmp}
	return e
}

// SparkSubmitEnv is the real spark-submit's environment: its Spark home,
// a fresh HOME (no kubeconfig), a fixed SPARK_USER and the case's extras
// (placeholders expanded).
func (e *Equiv) SparkSubmitEnv(t testing.TB, home string, extra map[string]string) []string {
	env := []string{"SPARK_HOME=" + home, "HOME=" + t.TempDir(), "SPARK_USER=prebake", "PATH=" + os.Getenv("PATH"),
		"KUBECONFIG=" + filepath.Join(e.Tmp, "no-kubeconfig")}
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		env = append(env, "JAVA_HOME="+jh)
	}
	for k, v := range extra {
		env = append(env, k+"="+nativetest.Expand([]string{v}, e.Repl)[0])
	}
	return env
}
