package layers

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/prebake/prebake/internal/optiontest"
)

// testOptions is makeOptions for tests: an option's error fails t.
func testOptions(t testing.TB, opts ...Option) *options {
	t.Helper()
	o, err := makeOptions(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestOptionErrorStops: an option's error stops every entry point that
// takes options before it does anything else.
func TestOptionErrorStops(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	layout := "oci:" + filepath.Join(dir, "img")
	tests := []struct {
		name string
		call func(opts ...Option) error
	}{
		{"Bake", func(opts ...Option) error { _, err := Bake(ctx, BakeInput{Target: layout}, opts...); return err }},
		{"BuildImage", func(opts ...Option) error { _, err := BuildImage(ctx, BuildSpec{Target: layout}, opts...); return err }},
		{"Inspect", func(opts ...Option) error { _, err := Inspect(ctx, layout, opts...); return err }},
		{"InspectPython", func(opts ...Option) error { _, err := InspectPython(ctx, layout, opts...); return err }},
		{"PushArtifact", func(opts ...Option) error { _, err := PushArtifact(ctx, layout, &Artifact{}, opts...); return err }},
		{"PullArtifact", func(opts ...Option) error { _, err := PullArtifact(ctx, layout, 1<<20, 1<<20, opts...); return err }},
		{"PingRegistry", func(opts ...Option) error { return PingRegistry(ctx, "127.0.0.1:1/x", false, opts...) }},
		{"BaseReport", func(opts ...Option) error { _, err := BaseReport(ctx, layout, "", opts...); return err }},
		{"ListTags", func(opts ...Option) error { _, err := ListTags(ctx, "127.0.0.1:1/x", opts...); return err }},
		{"makeOptions", func(opts ...Option) error {
			_, err := makeOptions(append([]Option{WithJobs(2)}, opts...)...)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { optiontest.Stops(t, tt.call) })
	}
}
