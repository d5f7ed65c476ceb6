// Package mavenhttp serves Maven repository directories over HTTP for tests
// and benchmarks: with a per-request delay, a request counter, a count of
// sequential rounds, injected faults and optional basic auth.
package mavenhttp

import (
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Fault handles a request instead of the file server when it returns true.
type Fault func(w http.ResponseWriter, r *http.Request, n int) bool

// Server is a Maven repository over HTTP.
type Server struct {
	*httptest.Server
	root  string
	delay time.Duration
	user  string
	pass  string
	noSum bool

	requests atomic.Int64
	inFlight atomic.Int64 // requests being answered now
	maxIn    atomic.Int64 // the most ever in flight at once
	mu       sync.Mutex
	agents   map[string]int // User-Agent → requests
	perPath  map[string]int
	faults   map[string]Fault
	log      []Entry
	gen      int // bumped by Reset
}

// Entry is one request: its path, when it arrived and when its answer was
// written (End is zero while it is in flight). Round is set by Timeline.
type Entry struct {
	At, End time.Time
	Path    string
	Round   int
}

// Option configures New.
type Option func(*Server)

// WithDelay sleeps d before answering each request (an emulated RTT).
func WithDelay(d time.Duration) Option { return func(s *Server) { s.delay = d } }

// WithoutChecksums answers 404 for checksum files (.sha1, .sha256,
// .sha512, .md5, .asc), as a repository that has none does; the requests
// are still counted.
func WithoutChecksums() Option { return func(s *Server) { s.noSum = true } }

// IsChecksum reports whether p names a checksum or signature file.
func IsChecksum(p string) bool {
	switch path.Ext(p) {
	case ".sha1", ".sha256", ".sha512", ".md5", ".asc":
		return true
	}
	return false
}

// WithBasicAuth requires user:pass on every request.
func WithBasicAuth(user, pass string) Option {
	return func(s *Server) { s.user, s.pass = user, pass }
}

// New serves the Maven repository directory root on 127.0.0.1. Close it
// when done.
func New(root string, opts ...Option) *Server {
	s := &Server{root: root, perPath: map[string]int{}, faults: map[string]Fault{}, agents: map[string]int{}}
	for _, o := range opts {
		o(s)
	}
	fs := http.FileServer(http.Dir(root))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		in := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for {
			if m := s.maxIn.Load(); in <= m || s.maxIn.CompareAndSwap(m, in) {
				break
			}
		}
		s.mu.Lock()
		s.agents[r.UserAgent()]++
		s.perPath[r.URL.Path]++
		i, gen := len(s.log), s.gen
		s.log = append(s.log, Entry{At: time.Now(), Path: r.URL.Path})
		n := s.perPath[r.URL.Path]
		f := s.faults[r.URL.Path]
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if gen == s.gen { // not Reset meanwhile
				s.log[i].End = time.Now()
			}
			s.mu.Unlock()
		}()
		if s.delay > 0 {
			time.Sleep(s.delay)
		}
		if s.user != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != s.user || p != s.pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="maven"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if f != nil && f(w, r, n) {
			return
		}
		if s.noSum && IsChecksum(r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		fs.ServeHTTP(w, r)
	}))
	return s
}

// URL returns the base URL with a trailing slash.
func (s *Server) URL() string { return s.Server.URL + "/" }

// Requests is the number of requests served so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

// MaxInFlight is the most requests the server was answering at once
// (since New or Reset).
func (s *Server) MaxInFlight() int { return int(s.maxIn.Load()) }

// UserAgents counts the requests so far by User-Agent header.
func (s *Server) UserAgents() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.agents))
	for k, v := range s.agents {
		out[k] = v
	}
	return out
}

// Count is the number of requests for one path.
func (s *Server) Count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perPath[path]
}

// Log returns the requests so far, in arrival order.
func (s *Server) Log() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Entry(nil), s.log...)
}

// Rounds is the number of sequential round trips the requests so far took,
// as the server saw them: the longest chain of requests each of which
// arrived after the previous one had been answered (see Timeline).
// Requests that overlap in time count as one round.
func (s *Server) Rounds() int {
	best := 0
	for _, e := range s.Timeline() {
		best = max(best, e.Round)
	}
	return best
}

// Timeline returns the requests so far in arrival order, each with its
// Round: the length of the longest chain of requests ending with it, each
// arriving after the previous one was answered. Call it once the client is
// done (a request still in flight counts as ending now).
func (s *Server) Timeline() []Entry {
	log := s.Log()
	now := time.Now()
	for i := range log {
		if log[i].End.IsZero() {
			log[i].End = now
		}
	}
	sort.SliceStable(log, func(i, j int) bool { return log[i].At.Before(log[j].At) })
	// O(n²): fine for the few hundred requests of a test.
	for i := range log {
		log[i].Round = 1
		for j := range i {
			if !log[j].End.After(log[i].At) {
				log[i].Round = max(log[i].Round, log[j].Round+1)
			}
		}
	}
	return log
}

// Reset zeroes the counters and the log.
func (s *Server) Reset() {
	s.requests.Store(0)
	s.maxIn.Store(0)
	s.mu.Lock()
	s.perPath = map[string]int{}
	s.agents = map[string]int{}
	s.log = nil
	s.gen++
	s.mu.Unlock()
}

// SetFault installs f for one path ("" removes it).
func (s *Server) SetFault(path string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		delete(s.faults, path)
		return
	}
	s.faults[path] = f
}

// Status answers with code for the first times requests, then serves
// normally; times < 0 means always.
func Status(code, times int, header ...string) Fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		if times >= 0 && n > times {
			return false
		}
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		http.Error(w, http.StatusText(code), code)
		return true
	}
}

// Body answers 200 with body (and its length) for every request.
func Body(body []byte) Fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Write(body)
		return true
	}
}

// Truncated announces size bytes but sends only part, then closes the
// connection, for the first times requests (times < 0: always).
func Truncated(part []byte, size, times int) Fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		if times >= 0 && n > times {
			return false
		}
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.WriteHeader(http.StatusOK)
		w.Write(part)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
		return true
	}
}

// Hang sends part of the body and then blocks until the request ends or
// release is closed.
func Hang(part []byte, size int, release <-chan struct{}) Fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.WriteHeader(http.StatusOK)
		w.Write(part)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	}
}
