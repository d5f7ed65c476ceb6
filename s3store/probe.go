package s3store

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/prebake/prebake/errdefs"
)

// Probe checks that the store answers with the credentials in use: for
// s3://, one list of at most one key under its prefix (the bucket exists,
// the endpoint answers, the credentials may list it); for a directory,
// that it is one. The error is typed as the store's others are (NotFound
// with ErrNoBucket, Denied, Unavailable). WithRetry bounds its attempts.
func (s *Store) Probe(ctx context.Context) error {
	switch b := s.b.(type) {
	case *s3Backend:
		prefix := s.prefix
		_, err := b.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &prefix, MaxKeys: aws.Int32(1)})
		if err != nil {
			return b.wrap("LIST", prefix, err)
		}
	case *fileBackend:
		st, err := os.Stat(b.root)
		switch {
		case err != nil:
			return errdefs.New(errdefs.NotFound, fmt.Errorf("store %s: %w", s.url, err))
		case !st.IsDir():
			return errdefs.Errorf(errdefs.NotFound, "store %s: not a directory", s.url)
		}
	}
	return nil
}
