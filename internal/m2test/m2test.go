// Package m2test writes Maven-layout repositories for the resolver's
// tests, and records log lines.
package m2test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Repo writes Maven-layout files into a temp dir.
type Repo struct {
	t   testing.TB
	Dir string
}

// New is a Repo in a temp dir of t.
func New(t testing.TB) *Repo { return &Repo{t: t, Dir: t.TempDir()} }

// Put writes rel with data and, for each of sums ("sha1", "sha256",
// "md5"), its checksum file.
func (r *Repo) Put(rel string, data []byte, sums ...string) {
	r.t.Helper()
	p := filepath.Join(r.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		r.t.Fatal(err)
	}
	for _, s := range sums {
		var h string
		switch s {
		case "sha1":
			x := sha1.Sum(data)
			h = hex.EncodeToString(x[:])
		case "sha256":
			h = Sha256Hex(data)
		case "md5":
			x := md5.Sum(data)
			h = hex.EncodeToString(x[:])
		}
		if err := os.WriteFile(p+"."+s, []byte(h+"\n"), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// Module writes g:a:v's POM and jar with .sha1 files.
func (r *Repo) Module(g, a, v string) {
	r.t.Helper()
	base := strings.ReplaceAll(g, ".", "/") + "/" + a + "/" + v + "/" + a + "-" + v
	r.Put(base+".pom", []byte(fmt.Sprintf("<project><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version></project>\n", g, a, v)), "sha1")
	r.Put(base+".jar", []byte("jar of "+g+":"+a+":"+v), "sha1")
}

// Sha256Hex is the lowercase hex sha256 of b.
func Sha256Hex(b []byte) string {
	x := sha256.Sum256(b)
	return hex.EncodeToString(x[:])
}

// LogBuf is a logger (Printf) that records lines; safe for concurrent use.
type LogBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Printf records one line.
func (l *LogBuf) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, format+"\n", args...)
}

// String is every line recorded.
func (l *LogBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// WriteFiles writes files (name → content) into a temp dir of t and returns
// it; "@DIR@" in a content becomes that dir.
func WriteFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "@DIR@", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
