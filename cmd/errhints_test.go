package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// TestWithHint: library errors name their options; the edge adds the flag
// and keeps the exit code.
func TestWithHint(t *testing.T) {
	ctx := context.Background()
	_, compErr := layers.ParseCompression("brotli")
	_, _, shardErr := pipeline.ParseShard("3/2")
	_, storeErr := s3store.Open(ctx, "bucket/prefix")
	_, concErr := s3store.Open(ctx, "file:///tmp/x", s3store.WithConcurrency(0))
	for _, tc := range []struct {
		name string
		err  error
		want string
		code int
	}{
		{"nil", nil, "", exitcode.OK},
		{"no hint", errors.New("plain"), "plain", exitcode.Internal},
		{"compression", compErr, `compression "brotli": want one of none, gzip, zstd, estargz; flag --compression`, exitcode.Usage},
		{"shard", shardErr, `shard "3/2": want i/n with 0 <= i < n; flag --shard`, exitcode.Usage},
		{"store without scheme", storeErr, `store "bucket/prefix": no scheme; want s3://bucket/prefix (S3) or file:///absolute/dir (a local directory); flag --store`, exitcode.Usage},
		{"concurrency, wrapped", fmt.Errorf("bake s3: %w", concErr), "bake s3: concurrency 0: must be at least 1; flag --concurrency", exitcode.Usage},
		{"unknown option", errdefs.Optionf(errdefs.Invalid, "x.Y", "y"), "y", exitcode.DataErr},
		{"set missing", errdefs.New(errdefs.NotFound, &s3store.SetMissingError{Hash: "h", Store: "s3://b/p/", Err: s3store.ErrNotFound}),
			"set h is not in the store s3://b/p/ (the lock was not baked into it): not found; run `prebake bake s3 --store s3://b/p --lock <lockfile>` first", exitcode.NotFound},
		{"set missing, store to quote", errdefs.New(errdefs.NotFound, &s3store.SetMissingError{Hash: "h", Store: "file:///tmp/my store/$(id)/", Err: s3store.ErrNotFound}),
			"set h is not in the store file:///tmp/my store/$(id)/ (the lock was not baked into it): not found; run `prebake bake s3 --store 'file:///tmp/my store/$(id)' --lock <lockfile>` first", exitcode.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withHint(tc.err)
			msg := ""
			if got != nil {
				msg = got.Error()
			}
			if diff := cmp.Diff(tc.want, msg); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if c := exitcode.Code(got); c != tc.code {
				t.Errorf("exit code %d, want %d", c, tc.code)
			}
		})
	}
}

// TestWithWarningHints: the library's rewrite warnings name no flag; the
// edge adds, per command, the flags that fix each kind.
func TestWithWarningHints(t *testing.T) {
	ctx := context.Background()
	src := func(cluster string) *rewrite.Jars {
		return &rewrite.Jars{Local: []string{"/c/a.jar"}, Cluster: []string{cluster}, From: "store file:///s"}
	}
	k8sCluster := []string{"--master", "k8s://https://h:6443", "--deploy-mode", "cluster", "--packages", "g:a:1", "local:///app.jar"}
	standalone := []string{"--master", "spark://h:7077", "--packages", "g:a:1", "app.jar"}
	for _, tc := range []struct {
		name, command string
		argv          []string
		jars          *rewrite.Jars
		opts          []rewrite.Option
		want          string
	}{
		{"file: URLs, rewrite", "rewrite", k8sCluster, src("file:///s/a.jar"), nil,
			"use an s3:// store or an image; give --store s3://bucket/prefix or --image-from REF"},
		{"file: URLs, submit", "submit", k8sCluster, src("file:///s/a.jar"), nil,
			"use an s3:// store or an image; give --store s3://bucket/prefix or --image-target REPO"},
		{"OCI layout, rewrite", "rewrite", k8sCluster, src("local:///opt/a.jar"), []rewrite.Option{rewrite.WithImage("oci:/tmp/l:1")},
			"oci:/tmp/l:1: an OCI layout on this host, not an image a node can pull; push it to a registry and use that reference; prebake bake image --target registry.example.com/team/spark-jobs pushes it; give that reference to --image-from"},
		{"image for standalone, rewrite", "rewrite", standalone, src("local:///opt/a.jar"), []rewrite.Option{rewrite.WithImage("r.example/s:1")},
			"image r.example/s:1: master standalone is not Kubernetes, so no image is set; the local:// jars must exist on every standalone node; flag --image-from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := submit.LoadSubmission(tc.argv, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, err := rewrite.Apply(ctx, sub, tc.jars, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range r.Warnings {
				if strings.Contains(w.Text, "--") {
					t.Errorf("library warning names a flag: %q", w.Text)
				}
			}
			withWarningHints(tc.command, r.Warnings)
			var texts []string
			for _, w := range r.Warnings {
				texts = append(texts, w.Text)
			}
			if got := strings.Join(texts, "\n"); !strings.Contains(got, tc.want) {
				t.Errorf("warnings:\n%s\nwant %q", got, tc.want)
			}
		})
	}
}
