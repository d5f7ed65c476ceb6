package layers

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
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

// TestOptionErrorStops checks that every entry point taking options
// returns an option's error before doing anything else.
func TestOptionErrorStops(t *testing.T) {
	errOpt := errors.New("test option refused")
	bad := func(*options) error { return errOpt }
	ctx := context.Background()
	dir := t.TempDir()
	layout := "oci:" + filepath.Join(dir, "img")
	tests := []struct {
		name string
		call func() error
	}{
		{"Bake", func() error { _, err := Bake(ctx, BakeInput{Target: layout}, bad); return err }},
		{"BuildImage", func() error { _, err := BuildImage(ctx, BuildSpec{Target: layout}, bad); return err }},
		{"Inspect", func() error { _, err := Inspect(ctx, layout, bad); return err }},
		{"InspectPython", func() error { _, err := InspectPython(ctx, layout, bad); return err }},
		{"PushArtifact", func() error { _, err := PushArtifact(ctx, layout, &Artifact{}, bad); return err }},
		{"PullArtifact", func() error { _, err := PullArtifact(ctx, layout, 1<<20, 1<<20, bad); return err }},
		{"PingRegistry", func() error { return PingRegistry(ctx, "127.0.0.1:1/x", false, bad) }},
		{"BaseReport", func() error { _, err := BaseReport(ctx, layout, "", bad); return err }},
		{"ListTags", func() error { _, err := ListTags(ctx, "127.0.0.1:1/x", bad); return err }},
		{"makeOptions", func() error { _, err := makeOptions(WithJobs(2), bad, WithLayers(2)); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, errOpt) {
				t.Errorf("err = %v, want the option's error", err)
			}
		})
	}
}
