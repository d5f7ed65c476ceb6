package pypi

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/internal/optiontest"
)

// TestOptionErrorStops: an option's error, of each option type, stops the
// call before it reads anything (here files that do not exist).
func TestOptionErrorStops(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	read := func(f func(context.Context, string, ...ReadOption) (*Input, error), name string) func(*testing.T) {
		return func(t *testing.T) {
			optiontest.Stops(t, func(opts ...ReadOption) error {
				_, err := f(ctx, filepath.Join(dir, name), append([]ReadOption{WithExtras("x")}, opts...)...)
				return err
			})
		}
	}
	tests := []struct {
		name string
		run  func(*testing.T)
	}{
		{"NewResolver", func(t *testing.T) {
			optiontest.Stops(t, func(opts ...Option) error {
				_, err := NewResolver(&IndexConfig{NoIndex: true}, nil, append([]Option{WithConcurrency(2)}, opts...)...)
				return err
			})
		}},
		{"NewClient", func(t *testing.T) {
			optiontest.Stops(t, func(opts ...ClientOption) error {
				cfg := &IndexConfig{Cert: filepath.Join(dir, "missing.pem")}
				_, err := NewClient(cfg, append([]ClientOption{WithMaxPage(1)}, opts...)...)
				return err
			})
		}},
		{"LoadIndexConfig", func(t *testing.T) {
			optiontest.Stops(t, func(opts ...ConfigOption) error {
				_, err := LoadIndexConfig(ctx, append([]ConfigOption{WithConfigRoots(dir, dir)}, opts...)...)
				return err
			})
		}},
		{"Read", read(Read, "requirements.txt")},
		{"ReadRequirements", read(ReadRequirements, "requirements.txt")},
		{"ReadPyproject", read(ReadPyproject, "pyproject.toml")},
		{"ReadPylock", read(ReadPylock, "pylock.toml")},
		{"ReadUvLock", read(ReadUvLock, "uv.lock")},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}
