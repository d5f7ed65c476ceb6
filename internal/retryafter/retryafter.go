// Package retryafter reads an HTTP Retry-After header and says, in one
// clause, what a 429's Retry-After means for the run: the Maven
// repositories' client (resolver/repo) and the Python index client
// (resolver/pypi) report a rate limit in the same words.
package retryafter

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Max bounds a parsed Retry-After (no overflow; far beyond any wait a run
// allows).
const Max = 365 * 24 * time.Hour

// Parse reads v (delay-seconds or an HTTP date) at now: 0 when absent,
// unparsable or past; at most Max.
func Parse(v string, now time.Time) time.Duration {
	var d time.Duration
	v = strings.TrimSpace(v)
	if v != "" && strings.Trim(v, "0123456789") == "" { // delay-seconds
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(Max/time.Second) {
			secs = int64(Max / time.Second) // beyond int64 too
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return max(0, min(d, Max))
}

// Advice is the end of a rate-limit message: what the server asked
// (retryAfter, due at at; none when 0), whether prebake waited (tooLong:
// longer than maxWait, so it did not) after how many attempts, and when to
// retry, followed by way (the way out, e.g. "use a mirror").
func Advice(retryAfter time.Duration, at time.Time, maxWait time.Duration, tooLong bool, attempts int, way string) string {
	var msg string
	switch {
	case retryAfter > 0 && tooLong:
		msg = fmt.Sprintf("; it asks to retry after %s (at %s), longer than the %s prebake may wait, so it did not", retryAfter, at.UTC().Format(time.RFC3339), maxWait)
	case retryAfter > 0:
		msg = fmt.Sprintf(" (%d attempts); it asks to retry after %s (at %s)", attempts, retryAfter, at.UTC().Format(time.RFC3339))
	default:
		msg = fmt.Sprintf(" (%d attempts, no Retry-After)", attempts)
	}
	when := "later"
	if retryAfter > 0 {
		when = "then"
	}
	return msg + "; retry " + when + ", " + way
}
