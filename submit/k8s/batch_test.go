package k8s

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
)

// TestReadBatch: one JSON argv per line, blank and # lines skipped; a bad
// line is errdefs.Invalid naming the input and the line.
func TestReadBatch(t *testing.T) {
	long := `["` + strings.Repeat("x", MaxBatchLine) + `"]`
	for _, tc := range []struct {
		name, in string
		want     []BatchEntry
		wantErr  string
	}{
		{"two", "# comment\n[\"--master\",\"k8s://h\"]\n\n  [\"a\"]  \n",
			[]BatchEntry{{Line: 2, Args: []string{"--master", "k8s://h"}}, {Line: 4, Args: []string{"a"}}}, ""},
		{"not an array", "[\"a\"]\n--master k8s://h\n", nil, "batch b.jsonl line 2: want a JSON array of strings"},
		{"numbers", "[1,2]\n", nil, "batch b.jsonl line 1: want a JSON array"},
		{"trailing", "[\"a\"] [\"b\"]\n", nil, "batch b.jsonl line 1: want a JSON array of strings (one spark-submit argv): trailing data"},
		{"empty argv", "[]\n", nil, "batch b.jsonl line 1: an empty argv"},
		{"nothing", "\n# only\n", nil, "batch b.jsonl: no application"},
		{"too long", "[\"a\"]\n" + long + "\n", nil, fmt.Sprintf("batch b.jsonl line 2: longer than %d bytes", MaxBatchLine)},
		{"too many", strings.Repeat("[\"a\"]\n", MaxBatch+1), nil, fmt.Sprintf("batch b.jsonl: more than %d applications (line %d)", MaxBatch, MaxBatch+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadBatch(strings.NewReader(tc.in), "b.jsonl")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errdefs.KindOf(err) != errdefs.Invalid {
					t.Fatalf("err = %v (kind %v), want Invalid containing %q", err, errdefs.KindOf(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeAPI is an in-process API server that creates what it is sent (pods,
// services, configmaps), refuses namespace "denied" (403), and counts the
// requests in flight and the connections.
type fakeAPI struct {
	srv                 *httptest.Server
	caFile              string
	inFlight, maxFlight atomic.Int32
	conns               atomic.Int32
	mu                  sync.Mutex
	created             map[string]int // kind → count
	delay               time.Duration
}

var fakeCreatePath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/(pods|services|configmaps)$`)

func newFakeAPI(t *testing.T, delay time.Duration) *fakeAPI {
	f := &fakeAPI{created: map[string]int{}, delay: delay}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.conns.Add(1)
		}
	}
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	f.caFile = filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(f.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxFlight.Load()
		if n <= m || f.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(f.delay)
	m := fakeCreatePath.FindStringSubmatch(r.URL.Path)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case m == nil || r.Method != http.MethodPost:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		return
	case m[1] == "denied":
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","message":"pods is forbidden","code":403}`)
		return
	}
	// The object as sent (protobuf, client-go's default, or JSON) is the
	// one created.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.created[m[2]]++
	f.mu.Unlock()
	w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

func (f *fakeAPI) args(ns, name string) []string {
	return []string{"--master", "k8s://" + f.srv.URL, "--deploy-mode", "cluster", "--name", name,
		"--conf", "spark.kubernetes.namespace=" + ns,
		"--conf", "spark.kubernetes.container.image=apache/spark:3.5.9",
		"--conf", "spark.kubernetes.authenticate.submission.oauthToken=batch-token",
		"--conf", "spark.kubernetes.authenticate.submission.caCertFile=" + f.caFile,
		"--class", "org.example.Main", "local:///opt/app.jar"}
}

// TestSubmitBatch: every submission is created natively and not waited
// for (phase Submitted, no Get of the pod), in order, at most parallel in
// flight, over one client (a handful of connections, not one per
// submission); a refused one fails alone (Denied), a client-mode one is a
// bad argument before anything is sent.
func TestSubmitBatch(t *testing.T) {
	f := newFakeAPI(t, 5*time.Millisecond)
	getenv := mapEnv(map[string]string{"USER": "u"})
	const n, parallel = 40, 4
	var apps []*submit.Prepared
	for i := 0; i < n; i++ {
		ns := "team"
		if i == 7 {
			ns = "denied"
		}
		args := f.args(ns, fmt.Sprintf("app-%d", i))
		if i == 9 {
			args = replaceDeployMode(args, "client")
		}
		apps = append(apps, &submit.Prepared{Sub: mustLoad(t, args, getenv)})
	}
	var stderr bytes.Buffer
	res, err := submitBatchWith(context.Background(), apps, parallel, WithDriverSparkVersion("3.5.9"), WithEnviron(getenv), WithStderr(&stderr))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != n {
		t.Fatalf("%d results, want %d", len(res), n)
	}
	for i, r := range res {
		switch i {
		case 7:
			if errdefs.KindOf(r.Err()) != errdefs.Denied || r.Reason != reasonSubmitFailed {
				t.Errorf("result %d: err %v (kind %v), reason %q; want Denied, SubmitFailed", i, r.Err(), errdefs.KindOf(r.Err()), r.Reason)
			}
		case 9:
			if errdefs.KindOf(r.Err()) != errdefs.BadArgument || !strings.Contains(r.Err().Error(), "cluster-mode") {
				t.Errorf("result %d: err %v, want a BadArgument about cluster mode", i, r.Err())
			}
		default:
			if r.Err() != nil || r.Phase != PhaseSubmitted || !strings.HasPrefix(r.SubmissionID, "team:app-"+fmt.Sprint(i)+"-") {
				t.Errorf("result %d: err %v, phase %q, id %q", i, r.Err(), r.Phase, r.SubmissionID)
			}
		}
	}
	ok := n - 2
	f.mu.Lock()
	created := f.created
	f.mu.Unlock()
	if diff := cmp.Diff(map[string]int{"pods": ok, "services": ok, "configmaps": ok}, created); diff != "" {
		t.Errorf("objects created (-want +got):\n%s", diff)
	}
	if m := f.maxFlight.Load(); m > parallel {
		t.Errorf("%d requests in flight, want at most %d", m, parallel)
	}
	if c := f.conns.Load(); c > parallel+1 {
		t.Errorf("%d connections for %d submissions: the client is not shared", c, n)
	}
	if strings.Contains(stderr.String(), "batch-token") {
		t.Errorf("the token is printed:\n%s", stderr.String())
	}
}

func replaceDeployMode(args []string, mode string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "--deploy-mode" {
			out[i+1] = mode
		}
	}
	return out
}

// TestSubmitBatchBounds: parallel and the batch size are bounded.
func TestSubmitBatchBounds(t *testing.T) {
	for _, p := range []int{0, -1, MaxBatchParallel + 1} {
		_, err := submitBatchWith(context.Background(), nil, p)
		var oe *errdefs.OptionError
		if errdefs.KindOf(err) != errdefs.BadArgument || !errors.As(err, &oe) || oe.Option != "k8s.SubmitBatch.parallel" {
			t.Errorf("parallel %d: %v, want BadArgument for k8s.SubmitBatch.parallel", p, err)
		}
	}
	_, err := submitBatchWith(context.Background(), make([]*submit.Prepared, MaxBatch+1), 1)
	if errdefs.KindOf(err) != errdefs.Invalid {
		t.Errorf("too many: %v, want Invalid", err)
	}
}
