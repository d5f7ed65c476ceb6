package cmd

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/s3store"
)

// TestWithHint: library errors name their options; the edge adds the flag
// and keeps the exit code.
func TestWithHint(t *testing.T) {
	ctx := context.Background()
	_, compErr := layers.ParseCompression("brotli")
	_, _, shardErr := s3store.ParseShard("3/2")
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
		{"compression", compErr, `compression "brotli": want one of none, gzip, zstd; flag --compression`, exitcode.Usage},
		{"shard", shardErr, `shard "3/2": want i/n with 0 <= i < n; flag --shard`, exitcode.Usage},
		{"store without scheme", storeErr, `store "bucket/prefix": no scheme; want s3://bucket/prefix (S3) or file:///absolute/dir (a local directory); flag --store`, exitcode.Usage},
		{"concurrency, wrapped", fmt.Errorf("bake s3: %w", concErr), "bake s3: concurrency 0: must be at least 1; flag --concurrency", exitcode.Usage},
		{"unknown option", errdefs.Optionf(errdefs.Invalid, "x.Y", "y"), "y", exitcode.DataErr},
		{"set missing", errdefs.New(errdefs.NotFound, &s3store.SetMissingError{Hash: "h", Store: "s3://b/p/", Err: s3store.ErrNotFound}),
			"set h is not in the store s3://b/p/ (the lock was not baked into it): not found; run `prebake bake s3 --store s3://b/p --lock <lockfile>` first", exitcode.NotFound},
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
