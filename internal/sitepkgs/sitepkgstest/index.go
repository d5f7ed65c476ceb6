package sitepkgstest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// WheelTagged is Wheel with the WHEEL file's Tag and Root-Is-Purelib
// (a platform wheel: cp311-cp311-manylinux_2_17_x86_64, false).
func WheelTagged(t testing.TB, dist, version, tag string, purelib bool, files ...File) []byte {
	t.Helper()
	di := dist + "-" + version + ".dist-info"
	all := append([]File{}, files...)
	all = append(all,
		File{Name: di + "/METADATA", Body: fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", dist, version)},
		File{Name: di + "/WHEEL", Body: fmt.Sprintf("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: %t\nTag: %s\n", purelib, tag)})
	return Zip(t, append(all, Record(di, all))...)
}

// Record is the RECORD of files in the dist-info directory di: a line of
// sha256 and size per file, then RECORD's own.
func Record(di string, files []File) File {
	var rec strings.Builder
	for _, f := range files {
		s := sha256.Sum256([]byte(f.Body))
		fmt.Fprintf(&rec, "%s,sha256=%s,%d\n", f.Name, base64.RawURLEncoding.EncodeToString(s[:]), len(f.Body))
	}
	rec.WriteString(di + "/RECORD,,\n")
	return File{Name: di + "/RECORD", Body: rec.String()}
}

// Index is a PEP 691 (JSON) simple index over httptest of fixed files
// that counts its requests and the User-Agents it saw: /simple/<project>/
// lists a project's files, /files/<name> serves one.
type Index struct {
	*httptest.Server
	// Requests counts every request answered.
	Requests atomic.Int64
	// Limit answers every request with a 429 and a long Retry-After.
	Limit    atomic.Bool
	mu       sync.Mutex
	projects map[string]map[string][]byte // project → file name → bytes
	agents   map[string]bool
}

// NewIndex starts an index; Close stops it (a closed port after).
func NewIndex() *Index {
	ix := &Index{projects: map[string]map[string][]byte{}, agents: map[string]bool{}}
	ix.Server = httptest.NewServer(http.HandlerFunc(ix.serve))
	return ix
}

// Add serves body as file of project (a normalized name).
func (ix *Index) Add(project, file string, body []byte) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.projects[project] == nil {
		ix.projects[project] = map[string][]byte{}
	}
	ix.projects[project][file] = body
}

// Agents is the set of User-Agents of the requests answered so far.
func (ix *Index) Agents() map[string]bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make(map[string]bool, len(ix.agents))
	for a := range ix.agents {
		out[a] = true
	}
	return out
}

func (ix *Index) serve(w http.ResponseWriter, r *http.Request) {
	ix.Requests.Add(1)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.agents[r.UserAgent()] = true
	if ix.Limit.Load() {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, "/files/"); ok {
		for _, files := range ix.projects {
			if b, ok := files[name]; ok {
				w.Write(b)
				return
			}
		}
		http.NotFound(w, r)
		return
	}
	files, ok := ix.projects[strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	type file struct {
		Filename string            `json:"filename"`
		URL      string            `json:"url"`
		Hashes   map[string]string `json:"hashes"`
		Size     int               `json:"size"`
	}
	out := []file{}
	for name, b := range files {
		s := sha256.Sum256(b)
		out = append(out, file{Filename: name, URL: "/files/" + name, Hashes: map[string]string{"sha256": hex.EncodeToString(s[:])}, Size: len(b)})
	}
	w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
	json.NewEncoder(w).Encode(map[string]any{"meta": map[string]string{"api-version": "1.1"}, "files": out})
}
