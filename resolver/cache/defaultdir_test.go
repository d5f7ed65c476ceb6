package cache

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDefaultDir: the default comes from getenv alone (as os.UserCacheDir
// reads it) and never from PREBAKE_CACHE, which is cmd's.
func TestDefaultDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the table is Linux's user cache directory")
	}
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"xdg", map[string]string{"XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"}, "/x/cache/prebake"},
		{"relative xdg ignored", map[string]string{"XDG_CACHE_HOME": "rel", "HOME": "/home/u"}, "/home/u/.cache/prebake"},
		{"home", map[string]string{"HOME": "/home/u"}, "/home/u/.cache/prebake"},
		{"PREBAKE_CACHE is not read", map[string]string{"PREBAKE_CACHE": "/elsewhere", "HOME": "/home/u"}, "/home/u/.cache/prebake"},
		{"nothing: temp", map[string]string{"TMPDIR": "/scratch"}, "/scratch/prebake-cache"},
		{"nothing at all", map[string]string{}, filepath.Join(os.TempDir(), "prebake-cache")},
	}
	var got, want []string
	for _, tt := range tests {
		got = append(got, tt.name+": "+DefaultDir(func(k string) string { return tt.env[k] }))
		want = append(want, tt.name+": "+tt.want)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("DefaultDir (-want +got):\n%s", d)
	}
}

// TestDir: a given directory is kept; "" is the process's default.
func TestDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	got := []string{Dir("/given"), Dir("")}
	if d := cmp.Diff([]string{"/given", DefaultDir(os.Getenv)}, got); d != "" {
		t.Errorf("Dir (-want +got):\n%s", d)
	}
}
