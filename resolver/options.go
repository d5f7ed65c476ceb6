package resolver

import (
	"context"
	"net/http"
	"time"

	"github.com/prebake/prebake/resolver/repo"
)

// Option configures how Resolve, NewSource, LockFor, FetchLocked and Stage
// work (transport, retries, parallelism, logging); what they resolve or
// fetch, and from where, is their Request. Options are pure setters: their
// order does not matter, and files are read by the functions, never by an
// option. Most are resolver/repo's, for the repository chain.
type Option func(*options) error

type options struct {
	repo []repo.Option
	log  Logger
	// buildGraph is BuildGraph; tests set another (withGraphBuilder) to
	// exercise the download and lock flow without the graph builder.
	buildGraph func(context.Context, Request, Source, Logger) (*Graph, error)
}

func makeOptions(opts []Option) (*options, error) {
	o := &options{log: nopLogger{}, buildGraph: BuildGraph}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// withRepo passes options to the repository chain.
func withRepo(opts ...repo.Option) Option {
	return func(o *options) error { o.repo = append(o.repo, opts...); return nil }
}

// withGraphBuilder replaces BuildGraph in Resolve (tests).
func withGraphBuilder(f func(context.Context, Request, Source, Logger) (*Graph, error)) Option {
	return func(o *options) error { o.buildGraph = f; return nil }
}

// WithHTTPClient sets the client for http(s) repositories (repo.WithHTTPClient).
func WithHTTPClient(c *http.Client) Option { return withRepo(repo.WithHTTPClient(c)) }

// WithLogger sends progress lines and warnings to l. The default discards them.
func WithLogger(l Logger) Option {
	return func(o *options) error {
		if l != nil {
			o.log = l
		}
		o.repo = append(o.repo, repo.WithLogger(l))
		return nil
	}
}

// WithMaxPerHost bounds concurrent requests per host (repo.WithMaxPerHost).
func WithMaxPerHost(n int) Option { return withRepo(repo.WithMaxPerHost(n)) }

// WithRetry sets the attempts per request and the first backoff (repo.WithRetry).
func WithRetry(attempts int, backoff time.Duration) Option {
	return withRepo(repo.WithRetry(attempts, backoff))
}

// WithMaxRetryWait bounds how long, in all, one request waits for the
// Retry-After of a 429 or 503 (repo.WithMaxRetryWait); Request.MaxRetryWait
// sets it too.
func WithMaxRetryWait(d time.Duration) Option { return withRepo(repo.WithMaxRetryWait(d)) }

// WithIdleTimeout fails an attempt when no byte arrives for d (repo.WithIdleTimeout).
func WithIdleTimeout(d time.Duration) Option { return withRepo(repo.WithIdleTimeout(d)) }

// WithParallel bounds concurrent artifact downloads in Resolve and
// FetchLocked (repo.WithParallel). The default is 32.
func WithParallel(n int) Option { return withRepo(repo.WithParallel(n)) }

// WithProgress reports each download to p (repo.WithProgress).
func WithProgress(p Progress) Option { return withRepo(repo.WithProgress(p)) }

// Progress receives the downloads (repo.Progress).
type Progress = repo.Progress
