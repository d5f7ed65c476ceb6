package s3store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// URLs returns the URL of every jar of m, in manifest (spark.jars) order.
// A file:// store gives file: URLs whatever the style. Presigned URLs are
// bearer credentials: print them only as the product, never in logs.
func (s *Store) URLs(ctx context.Context, m *Manifest, style URLStyle) ([]string, error) {
	if err := CheckStyle(style); err != nil {
		return nil, err
	}
	urls := make([]string, 0, len(m.Jars))
	for _, j := range m.Jars {
		key, err := s.jarKey(j)
		if err != nil {
			return nil, err
		}
		u, err := s.b.url(ctx, key, style, s.o.expires)
		if err != nil {
			return nil, err
		}
		urls = append(urls, u)
	}
	return urls, nil
}

// SetURLs reads the manifest of the set lockHash in the store at storeURL
// and returns its jars' URLs in spark.jars order, in the given style
// (StyleS3A, StylePresigned or StyleHTTPS; WithExpires sets how long
// presigned URLs last). A missing manifest is a *SetMissingError (kind
// NotFound): the lock was never baked into the store. It costs one GET (plus local signing).
func SetURLs(ctx context.Context, storeURL, lockHash string, style URLStyle, opts ...Option) ([]string, error) {
	s, err := Open(ctx, storeURL, opts...)
	if err != nil {
		return nil, err
	}
	m, err := s.Manifest(ctx, lockHash)
	if errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNoBucket) {
		return nil, errdefs.New(errdefs.NotFound, &SetMissingError{Hash: lockHash, Store: s.URL(), Err: err})
	}
	if err != nil {
		return nil, err
	}
	s.recordUse(ctx, lockHash)
	return s.URLs(ctx, m, style)
}

// JarsValue joins URLs into a spark.jars value.
func JarsValue(urls []string) string { return strings.Join(urls, ",") }

// SetMissingError says that the set of a lock is not in a store: bake the
// lock into the store first.
type SetMissingError struct {
	Hash  string // the lock hash
	Store string // the store URL, without credentials
	Err   error  // matches ErrNotFound
}

func (e *SetMissingError) Error() string {
	return fmt.Sprintf("set %s is not in the store %s (the lock was not baked into it): %v", e.Hash, e.Store, e.Err)
}

// Unwrap returns the cause.
func (e *SetMissingError) Unwrap() error { return e.Err }
