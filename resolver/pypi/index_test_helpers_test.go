package pypi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prebake/prebake/internal/sitepkgs/sitepkgstest"
)

// testWheel builds a real wheel of dist at version, tagged tag
// ("py3-none-any"), with a module, METADATA (requires are Requires-Dist
// lines), WHEEL and RECORD.
func testWheel(t testing.TB, dist, version, tag string, requires ...string) []byte {
	t.Helper()
	mod := strings.ReplaceAll(dist, "-", "_")
	di := mod + "-" + version + ".dist-info"
	meta := "Metadata-Version: 2.1\nName: " + dist + "\nVersion: " + version + "\n"
	for _, r := range requires {
		meta += "Requires-Dist: " + r + "\n"
	}
	files := []sitepkgstest.File{
		{Name: mod + "/__init__.py", Body: "VERSION = " + fmt.Sprintf("%q", version) + "\n"},
		{Name: di + "/METADATA", Body: meta},
		{Name: di + "/WHEEL", Body: "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: " + fmt.Sprint(strings.HasPrefix(tag, "py")) + "\nTag: " + tag + "\n"},
	}
	return sitepkgstest.Zip(t, append(files, sitepkgstest.Record(di, files))...)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fakeFile is a file of a fake index.
type fakeFile struct {
	name           string
	body           []byte
	yanked         bool
	requiresPython string
	// wrongHash makes the page give another sha256 than the body's.
	wrongHash bool
}

// fakeIndex is a simple repository API over httptest: JSON (PEP 691) or
// HTML (PEP 503) pages, files under /files/.
type fakeIndex struct {
	*httptest.Server
	html     bool
	mu       sync.Mutex
	projects map[string][]fakeFile
	// page, if set, answers a project page instead.
	page      func(w http.ResponseWriter, r *http.Request) bool
	pages     atomic.Int64
	downloads atomic.Int64
	// user and pass, if set, are required (basic auth) on every request.
	user, pass string
}

func newFakeIndex(t testing.TB, html bool) *fakeIndex {
	f := &fakeIndex{html: html, projects: map[string][]fakeFile{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeIndex) add(project string, files ...fakeFile) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.projects[project] = append(f.projects[project], files...)
}

// simple is the index URL.
func (f *fakeIndex) simple() string { return f.URL + "/simple/" }

func (f *fakeIndex) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u, p, _ := r.BasicAuth(); f.user != "" && (u != f.user || p != f.pass) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, "/files/"); ok {
		for _, files := range f.projects {
			for _, ff := range files {
				if ff.name == name {
					f.downloads.Add(1)
					w.Write(ff.body)
					return
				}
			}
		}
		http.NotFound(w, r)
		return
	}
	project, ok := strings.CutPrefix(r.URL.Path, "/simple/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	f.pages.Add(1)
	if f.page != nil && f.page(w, r) {
		return
	}
	project = strings.TrimSuffix(project, "/")
	files, ok := f.projects[project]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hashOf := func(ff fakeFile) string {
		if ff.wrongHash {
			return sha256Hex(append([]byte("other"), ff.body...))
		}
		return sha256Hex(ff.body)
	}
	if f.html {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><meta name=\"pypi:repository-version\" content=\"1.1\"></head><body>\n")
		for _, ff := range files {
			attrs := ""
			if ff.requiresPython != "" {
				attrs += ` data-requires-python="` + html.EscapeString(ff.requiresPython) + `"`
			}
			if ff.yanked {
				attrs += ` data-yanked=""`
			}
			fmt.Fprintf(w, "<a href=\"../../files/%s#sha256=%s\"%s>%s</a><br/>\n", ff.name, hashOf(ff), attrs, ff.name)
		}
		fmt.Fprintf(w, "</body></html>\n")
		return
	}
	type jf struct {
		Filename       string            `json:"filename"`
		URL            string            `json:"url"`
		Hashes         map[string]string `json:"hashes"`
		RequiresPython *string           `json:"requires-python,omitempty"`
		Yanked         any               `json:"yanked"`
		Size           int               `json:"size"`
	}
	doc := map[string]any{"meta": map[string]string{"api-version": "1.1"}, "name": project}
	var out []jf
	for _, ff := range files {
		j := jf{Filename: ff.name, URL: "/files/" + ff.name, Hashes: map[string]string{"sha256": hashOf(ff)}, Yanked: false, Size: len(ff.body)}
		if ff.requiresPython != "" {
			rp := ff.requiresPython
			j.RequiresPython = &rp
		}
		if ff.yanked {
			j.Yanked = "broken"
		}
		out = append(out, j)
	}
	doc["files"] = out
	w.Header().Set("Content-Type", mediaJSON)
	json.NewEncoder(w).Encode(doc)
}
