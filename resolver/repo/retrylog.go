package repo

import "net/url"

// retryLogger is a Logger that summarises retries by host (the CLI's
// progress reporter): the first is printed, the rest are counted.
type retryLogger interface {
	Retryf(host, format string, args ...any)
}

// hostOf is the host of a URL, for grouping retries.
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}
