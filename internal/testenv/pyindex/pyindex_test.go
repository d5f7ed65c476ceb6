package pyindex

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/resolver/pypi"
)

// fakeIndex is an index whose pages link to files on a second host (as
// PyPI's do) and, relatively, on its own.
func fakeIndex(t *testing.T) (index, files *httptest.Server) {
	t.Helper()
	files = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/packages/aa/demo-1.0-py3-none-any.whl" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, "remote wheel")
	}))
	t.Cleanup(files.Close)
	index = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "team" || p != "s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/simple/demo/":
			if strings.Contains(r.Header.Get("Accept"), "json") {
				w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
				_ = json.NewEncoder(w).Encode(map[string]any{"meta": map[string]any{"api-version": "1.1"}, "name": "demo",
					"files": []any{map[string]any{"filename": "demo-1.0-py3-none-any.whl", "url": files.URL + "/packages/aa/demo-1.0-py3-none-any.whl", "hashes": map[string]any{"sha256": "ab"}}}})
				return
			}
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<html><body><a href="`+files.URL+`/packages/aa/demo-1.0-py3-none-any.whl#sha256=ab" data-requires-python="&gt;=3.8">demo-1.0-py3-none-any.whl</a>
<a href='../../local/demo-1.0.tar.gz?x=1&amp;y=2#sha256=cd'>demo-1.0.tar.gz</a></body></html>`)
		case "/local/demo-1.0.tar.gz":
			_, _ = io.WriteString(w, "local sdist "+r.URL.RawQuery)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(index.Close)
	return index, files
}

func get(t *testing.T, u, accept string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("User-Agent", "prebake/test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestProxyRewritesAndCounts(t *testing.T) {
	index, files := fakeIndex(t)
	up := strings.Replace(index.URL, "http://", "http://team:s3cret@", 1) + "/simple/"
	ix := Start(t, Upstream(&pypi.IndexConfig{IndexURL: up}))

	code, page := get(t, ix.URL+"demo/", "text/html")
	if code != 200 {
		t.Fatalf("page: %d %s", code, page)
	}
	fileHost := strings.TrimPrefix(files.URL, "http://")
	indexHost := strings.TrimPrefix(index.URL, "http://")
	wantWheel := ix.base + "/files/http/" + fileHost + "/packages/aa/demo-1.0-py3-none-any.whl#sha256=ab"
	wantSdist := ix.base + "/files/http/" + indexHost + "/local/demo-1.0.tar.gz?x=1&amp;y=2#sha256=cd"
	for _, w := range []string{`href="` + wantWheel + `"`, `href="` + wantSdist + `"`, `data-requires-python="&gt;=3.8"`} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %s:\n%s", w, page)
		}
	}
	if strings.Contains(page, "s3cret") {
		t.Errorf("page holds the upstream's password:\n%s", page)
	}

	code, js := get(t, ix.URL+"demo/", "application/vnd.pypi.simple.v1+json")
	var doc struct {
		Files []struct{ URL string } `json:"files"`
	}
	if err := json.Unmarshal([]byte(js), &doc); code != 200 || err != nil || len(doc.Files) != 1 {
		t.Fatalf("JSON page: %d %v %s", code, err, js)
	}
	if diff := cmp.Diff(strings.TrimSuffix(wantWheel, "#sha256=ab"), doc.Files[0].URL); diff != "" {
		t.Errorf("JSON file URL (-want +got):\n%s", diff)
	}

	if code, body := get(t, strings.TrimSuffix(wantWheel, "#sha256=ab"), ""); code != 200 || body != "remote wheel" {
		t.Errorf("wheel through the proxy: %d %q", code, body)
	}
	if code, body := get(t, ix.base+"/files/http/"+indexHost+"/local/demo-1.0.tar.gz?x=1&y=2", ""); code != 200 || body != "local sdist x=1&y=2" {
		t.Errorf("sdist through the proxy (credentials on the index's own host): %d %q", code, body)
	}
	if code, _ := get(t, ix.base+"/files/http/127.0.0.9:1/x.whl", ""); code != http.StatusForbidden {
		t.Errorf("a host no page linked to: %d, want 403", code)
	}
	if code, _ := get(t, ix.URL+"../../x", ""); code != http.StatusNotFound {
		t.Errorf("a .. path: %d, want 404", code)
	}
	if code, _ := get(t, ix.URL+"nothere/", ""); code != http.StatusNotFound {
		t.Errorf("a missing project: %d, want the upstream's 404", code)
	}

	var got []string
	for _, r := range ix.Requests() {
		got = append(got, string(r.Kind)+" "+r.UserAgent+" "+http.StatusText(r.Status))
	}
	want := []string{"page prebake/test OK", "page prebake/test OK", "file prebake/test OK", "file prebake/test OK",
		"file prebake/test Forbidden", "page prebake/test Not Found", "page prebake/test Not Found"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if n := len(ix.Since(5)); n != 2 || ix.Count() != 7 {
		t.Errorf("Since(5) %d, Count %d; want 2, 7", n, ix.Count())
	}
	for _, r := range ix.Requests() {
		if strings.Contains(r.Upstream, "s3cret") {
			t.Errorf("a request's upstream holds the password: %s", r.Upstream)
		}
	}
}

// TestPipConfIsWhatPrebakeReads: the written pip.conf with Env, read as
// prebake reads the machine's configuration, names the proxy alone.
func TestPipConfIsWhatPrebakeReads(t *testing.T) {
	index, _ := fakeIndex(t)
	ix := Start(t, Upstream(&pypi.IndexConfig{IndexURL: index.URL + "/simple/", ExtraIndexURLs: []string{index.URL + "/extra/"}}))
	dir := t.TempDir()
	env := map[string]string{"PIP_FIND_LINKS": "/opt/wheels", "PIP_INDEX_URL": "https://elsewhere.invalid/simple"}
	for _, kv := range ix.Env(t, dir) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, err := pypi.LoadIndexConfig(t.Context(), pypi.WithConfigRoots(t.TempDir(), t.TempDir()),
		pypi.WithConfigEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }), pypi.WithPipDefault(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cfg.IndexURL, strings.Join(cfg.ExtraIndexURLs, " "), strings.Join(cfg.FindLinks, " ")}
	if diff := cmp.Diff([]string{ix.URL, ix.ExtraURLs[0], ""}, got); diff != "" {
		t.Errorf("configuration read (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "pip.conf")); err != nil {
		t.Error(err)
	}
}
