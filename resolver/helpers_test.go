package resolver

import "time"

// fastOpts are options for tests: short backoff and timeouts.
func fastOpts(extra ...Option) []Option {
	return append([]Option{WithRetry(3, 10*time.Millisecond), WithIdleTimeout(2 * time.Second)}, extra...)
}
