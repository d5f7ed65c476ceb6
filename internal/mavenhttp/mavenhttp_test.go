package mavenhttp

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRounds counts sequential rounds of requests made one after another
// and side by side, against a delayed server.
func TestRounds(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		waves []int // requests side by side, wave after wave
		want  int
	}{
		{"none", nil, 0},
		{"one", []int{1}, 1},
		{"parallel", []int{4}, 1},
		{"sequential", []int{1, 1, 1}, 3},
		{"mixed", []int{3, 1, 2}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(dir, WithDelay(200*time.Millisecond)) // long enough that a wave's requests overlap on a loaded machine
			defer s.Close()
			for _, n := range tt.waves {
				var wg sync.WaitGroup
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						get(t, s.URL()+"f")
					}()
				}
				wg.Wait()
			}
			if got := s.Rounds(); got != tt.want {
				t.Errorf("Rounds() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestWithoutChecksums(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a.jar": "jar", "a.jar.sha1": "sum", "a.jar.md5": "sum"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := New(dir, WithoutChecksums())
	defer s.Close()
	got := map[string]int{}
	for _, p := range []string{"a.jar", "a.jar.sha1", "a.jar.md5", "a.jar.sha256"} {
		got[p] = get(t, s.URL()+p)
	}
	want := map[string]int{"a.jar": 200, "a.jar.sha1": 404, "a.jar.md5": 404, "a.jar.sha256": 404}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
	if s.Requests() != 4 {
		t.Errorf("%d requests counted, want 4", s.Requests())
	}
}

func get(t *testing.T, u string) int {
	resp, err := http.Get(u)
	if err != nil {
		t.Error(err)
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
