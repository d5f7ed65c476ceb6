package pypi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
)

// TestResolveUVKeepsUserHashes: a file that is not fully pinned is
// compiled by uv (here a stand-in that answers with the index's own
// hashes), and the --hash the user wrote on six still decides: a wrong
// one is ErrHashMismatch (errdefs.Invalid, exit 65), as it is when the
// file is fully pinned; the right one resolves.
func TestResolveUVKeepsUserHashes(t *testing.T) {
	ix, w := demoIndex(t, false)
	six, pure := w["six-1.16.0-py2.py3-none-any.whl"], w["demo-1.0-py3-none-any.whl"]
	ml := w["demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"]
	dir := t.TempDir()
	compiled := writeFile(t, dir, "compiled.txt", hashLine("demo", "1.0", ml, pure)+hashLine("six", "1.16.0", six))
	uv := writeFile(t, dir, "uv", "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = -o ]; then cp '"+compiled+"' \"$2\"; exit $?; fi\n  shift\ndone\nexit 2\n")
	if err := os.Chmod(uv, 0o755); err != nil {
		t.Fatal(err)
	}
	fakeUV := WithUVEnv(func(k string) (string, bool) {
		if k == "PREBAKE_UV" {
			return uv, true
		}
		return "", false
	})
	for _, tc := range []struct {
		name, reqs string
		kind       errdefs.Kind
	}{
		{"wrong hash", "six==1.16.0 --hash=sha256:" + strings.Repeat("ab", 32) + "\ndemo>=1\n", errdefs.Invalid},
		{"wrong hash on a constraint", "-c c.txt\nsix\ndemo>=1\n", errdefs.Invalid},
		{"right hash", "six==1.16.0 --hash=sha256:" + sha256Hex(six) + "\ndemo>=1\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			writeFile(t, top, "c.txt", "six==1.16.0 --hash=sha256:"+strings.Repeat("cd", 32)+"\n")
			in, err := ReadRequirements(context.Background(), writeFile(t, top, "requirements.txt", tc.reqs))
			if err != nil {
				t.Fatal(err)
			}
			r, _ := newTestResolver(t, &IndexConfig{IndexURL: ix.simple()}, fakeUV)
			got, err := r.Resolve(context.Background(), in, testTarget)
			if tc.kind == 0 {
				if err != nil || len(got) != 2 {
					t.Fatalf("got %+v, %v", got, err)
				}
				return
			}
			if !errors.Is(err, tc.kind) || !errors.Is(err, ErrHashMismatch) || !strings.Contains(err.Error(), "six") {
				t.Errorf("error %v: kind %v, want %v and ErrHashMismatch naming six", err, errdefs.KindOf(err), tc.kind)
			}
		})
	}
}

// TestDownloadCancelled: a download cut by the caller's cancel is the
// context's error, not errdefs.Unavailable.
func TestDownloadCancelled(t *testing.T) {
	body := testWheel(t, "slow", "1.0", "py3-none-any")
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/files/") {
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			close(started)
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", mediaJSON)
		json.NewEncoder(w).Encode(map[string]any{"meta": map[string]string{"api-version": "1.1"}, "name": "slow",
			"files": []map[string]any{{"filename": "slow-1.0-py3-none-any.whl", "url": "/files/slow-1.0-py3-none-any.whl",
				"hashes": map[string]string{"sha256": sha256Hex(body)}, "size": len(body)}}})
	}))
	defer srv.Close()
	r, _ := newTestResolver(t, &IndexConfig{IndexURL: srv.URL + "/simple/"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := r.Resolve(ctx, readReqs(t, hashLine("slow", "1.0", body)), testTarget)
	if !errors.Is(err, context.Canceled) || errors.Is(err, errdefs.Unavailable) {
		t.Errorf("error %v (kind %v), want context.Canceled", err, errdefs.KindOf(err))
	}
}

// TestWriteTagged: a failed write to the cache is errdefs.CantWrite's
// cause, told apart from the download's.
func TestWriteTagged(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = writeTagged{f}.Write([]byte("x"))
	var we writeError
	if !errors.As(err, &we) || !errors.Is(err, os.ErrClosed) {
		t.Errorf("error %v, want a writeError wrapping os.ErrClosed", err)
	}
}
