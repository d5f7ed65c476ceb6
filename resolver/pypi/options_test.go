package pypi

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestOptionErrorStops: an option's error (of each option type) stops the
// call before it reads anything (here files that do not exist), and the
// options after it are not applied.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option")
	ctx := context.Background()
	dir := t.TempDir()
	cfg := &IndexConfig{NoIndex: true}
	var applied bool
	read := func(f func(context.Context, string, ...ReadOption) (*Input, error), name string) func() error {
		return func() error {
			_, err := f(ctx, filepath.Join(dir, name), WithExtras("x"), func(*readOptions) error { return errOpt },
				func(*readOptions) error { applied = true; return nil })
			return err
		}
	}
	tests := []struct {
		name string
		call func() error
	}{
		{"NewResolver", func() error {
			_, err := NewResolver(cfg, nil, WithConcurrency(2), func(*options) error { return errOpt },
				func(*options) error { applied = true; return nil })
			return err
		}},
		{"NewClient", func() error {
			_, err := NewClient(&IndexConfig{Cert: filepath.Join(dir, "missing.pem")}, WithMaxPage(1),
				func(*clientOptions) error { return errOpt }, func(*clientOptions) error { applied = true; return nil })
			return err
		}},
		{"LoadIndexConfig", func() error {
			_, err := LoadIndexConfig(ctx, WithConfigRoots(dir, dir), func(*configOptions) error { return errOpt },
				func(*configOptions) error { applied = true; return nil })
			return err
		}},
		{"Read", read(Read, "requirements.txt")},
		{"ReadRequirements", read(ReadRequirements, "requirements.txt")},
		{"ReadPyproject", read(ReadPyproject, "pyproject.toml")},
		{"ReadPylock", read(ReadPylock, "pylock.toml")},
		{"ReadUvLock", read(ReadUvLock, "uv.lock")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			applied = false
			if err := tt.call(); !errors.Is(err, errOpt) {
				t.Errorf("%s: %v, want the option's error", tt.name, err)
			}
			if applied {
				t.Error("an option after the failing one was applied")
			}
		})
	}
}
