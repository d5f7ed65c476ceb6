package cmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestTmpNative(t *testing.T) {
	isolatedCLI(t)
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		t.Logf("%s %s", r.Method, r.URL)
		switch {
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/pods"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			w.Write([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","uid":"u1"}}`))
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/configmaps"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(413)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}`))
		case r.Method == "POST":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			w.Write([]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}`))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			w.Write([]byte(`{}`))
		}
	}))
	defer s.Close()
	pf := filepath.Join(t.TempDir(), "big.conf")
	os.WriteFile(pf, []byte("spark.x="+strings.Repeat("a", 4<<20)+"\n"), 0o644)
	for _, ns := range []string{"../x", "default"} {
		code, out, errs := runPrebake(context.Background(), "submit", "--submitter", "native", "--spark-version", "3.5.9", "--",
			"--master", "k8s://"+s.URL, "--deploy-mode", "cluster", "--properties-file", pf,
			"--conf", "spark.kubernetes.namespace="+ns, "--conf", "spark.kubernetes.authenticate.submission.oauthToken=tok",
			"--conf", "spark.kubernetes.container.image=apache/spark:3.5.9", "--class", "M", "local:///a.jar")
		t.Logf("%s: %d %d %s %s", ns, code, n.Load(), out, errs)
	}
}
