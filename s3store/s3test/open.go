package s3test

import (
	"context"
	"testing"
	"time"

	"github.com/prebake/prebake/s3store"
)

// Open opens the store s3://bucket/team/cache at endpoint (the server's,
// or a proxy's) with the test credentials, path-style addressing and
// short retries; opts add to those.
func Open(t testing.TB, endpoint, bucket string, opts ...s3store.Option) *s3store.Store {
	t.Helper()
	base := []s3store.Option{
		s3store.WithEndpoint(endpoint), s3store.WithPathStyle(true), s3store.WithRegion("us-east-1"),
		s3store.WithStaticCredentials(AccessKey, SecretKey),
		s3store.WithRetry(4, 50*time.Millisecond),
	}
	s, err := s3store.Open(context.Background(), "s3://"+bucket+"/team/cache", append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
