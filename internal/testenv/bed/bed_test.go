package bed

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestStatePath(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		t.Setenv("PREBAKE_BED", "")
		os.Unsetenv("PREBAKE_BED")
		if got := StatePath(); got != StateFile {
			t.Errorf("StatePath() = %q, want %q", got, StateFile)
		}
	})
	t.Run("another file", func(t *testing.T) {
		t.Setenv("PREBAKE_BED", "/tmp/x.json")
		if got := StatePath(); got != "/tmp/x.json" {
			t.Errorf("StatePath() = %q", got)
		}
	})
	t.Run("empty never attaches", func(t *testing.T) {
		t.Setenv("PREBAKE_BED", "")
		if got := StatePath(); got != "" {
			t.Errorf("StatePath() = %q, want empty", got)
		}
		if _, err := Read(StatePath()); !errors.Is(err, ErrNoBed) {
			t.Errorf("Read(\"\") = %v, want ErrNoBed", err)
		}
	})
}

func TestPublishRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bed.json")
	want := &State{Pid: os.Getpid(),
		Registry: &RegistryServer{Pid: 1, Host: "127.0.0.1:5000", Dir: "/r"},
		Nginx:    &NginxServer{Pid: 2, URL: "http://127.0.0.1:8080/", Dir: "/n"},
		S3:       &S3Server{Pid: 3, Endpoint: "http://127.0.0.1:7070", Root: "/s/data", Dir: "/s"},
	}
	if err := Publish(path, want); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.part")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(RegistryServer{}, NginxServer{}, S3Server{})); d != "" {
		t.Errorf("Read (-published +read):\n%s", d)
	}
}

func TestReadGone(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		setup func(path string) error
	}{
		{"missing", func(string) error { return nil }},
		{"dead pid", func(p string) error { return Publish(p, &State{Pid: 1 << 30}) }},
		{"no pid", func(p string) error { return Publish(p, &State{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".json")
			if err := tc.setup(path); err != nil {
				t.Fatal(err)
			}
			if _, err := Read(path); !errors.Is(err, ErrNoBed) {
				t.Errorf("Read = %v, want ErrNoBed", err)
			}
		})
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bad); err == nil || errors.Is(err, ErrNoBed) {
		t.Errorf("Read of a malformed file = %v, want an error naming it", err)
	}
}
