package netprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
		case "/denied":
			w.WriteHeader(http.StatusUnauthorized)
		case "/fail":
			w.WriteHeader(http.StatusBadGateway)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	tests := []struct {
		url       string
		status    string
		code      int
		class     string
		reachable bool
	}{
		{srv.URL + "/ok", StatusOK, 200, "", true},
		{srv.URL + "/missing", StatusAnswered, 404, "", true},
		{srv.URL + "/denied", StatusDenied, 401, "", true},
		{srv.URL + "/fail", StatusFailing, 502, "", false},
		{srv.URL + "/slow", StatusUnreachable, 0, ClassTimeout, false},
		{closed, StatusUnreachable, 0, ClassRefused, false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			a := HTTP(context.Background(), srv.Client(), http.MethodHead, tc.url, 300*time.Millisecond, nil)
			got := []any{a.Status, a.HTTPStatus, a.ErrorClass, a.Reachable()}
			if diff := cmp.Diff([]any{tc.status, tc.code, tc.class, tc.reachable}, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%+v", diff, a)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, ClassDNS},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), ClassRefused},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), ClassReset},
		{context.DeadlineExceeded, ClassTimeout},
		{errors.New("something else"), ClassOther},
	}
	for _, tc := range tests {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{dir: StatusOK, filepath.Join(dir, "none"): StatusAbsent, file: StatusUnreachable} {
		if got := Dir(path).Status; got != want {
			t.Errorf("Dir(%s) = %s, want %s", path, got, want)
		}
	}
}
