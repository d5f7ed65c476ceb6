package repo

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/mavenhttp"
)

// TestThrottledRepository is a repository that throttles (issue 31,
// "Central etiquette"): 429 and 503 wait their Retry-After (seconds or an
// HTTP date), a huge one is capped, one past the deadline ends at once, and
// none of it is taken for "not found".
func TestThrottledRepository(t *testing.T) {
	const pom = "/org/x/m/1.0/m-1.0.pom"
	tests := []struct {
		name      string
		fault     func() mavenhttp.Fault
		opts      []Option
		timeout   time.Duration
		wantErr   bool
		wantMsg   string
		wantCount int
		minTime   time.Duration
		maxTime   time.Duration
	}{
		{name: "429 Retry-After 1 twice then 200", fault: func() mavenhttp.Fault { return mavenhttp.Status(429, 2, "Retry-After", "1") },
			wantCount: 3, minTime: 2 * time.Second, maxTime: 10 * time.Second},
		{name: "503 Retry-After 1 then 200", fault: func() mavenhttp.Fault { return mavenhttp.Status(503, 1, "Retry-After", "1") },
			wantCount: 2, minTime: time.Second, maxTime: 8 * time.Second},
		{name: "503 Retry-After HTTP date", fault: func() mavenhttp.Fault {
			return mavenhttp.Status(503, 1, "Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
		}, wantCount: 2, minTime: 500 * time.Millisecond, maxTime: 8 * time.Second},
		{name: "429 Retry-After 1800 fails at once", fault: func() mavenhttp.Fault { return mavenhttp.Status(429, 1, "Retry-After", "1800") },
			wantErr: true, wantMsg: "retry after 30m0s", wantCount: 1, maxTime: 1500 * time.Millisecond},
		{name: "429 Retry-After 1 past WithMaxRetryWait fails at once", fault: func() mavenhttp.Fault { return mavenhttp.Status(429, 1, "Retry-After", "1") },
			opts: []Option{WithMaxRetryWait(300 * time.Millisecond)}, wantErr: true, wantMsg: "longer than the 300ms", wantCount: 1, maxTime: 1500 * time.Millisecond},
		{name: "a wait past the deadline ends the retries", fault: func() mavenhttp.Fault { return mavenhttp.Status(429, -1, "Retry-After", "5") },
			timeout: 2 * time.Second, wantErr: true, wantMsg: "retry after 5s", wantCount: 1, maxTime: 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := m2test.New(t)
			a.Module("org.x", "m", "1.0")
			srv := mavenhttp.New(a.Dir)
			defer srv.Close()
			srv.SetFault(pom, tt.fault())
			s := testSource(t, []string{srv.URL()}, ChecksumWarn, tt.opts...)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			_, err := s.POM(ctx, "org.x", "m", "1.0")
			took := time.Since(start)
			switch {
			case tt.wantErr && err == nil:
				t.Fatal("no error")
			case tt.wantErr:
				var rl *RateLimitError
				if errors.Is(err, ErrNotFound) || errdefs.KindOf(err) != errdefs.RateLimited || !errors.As(err, &rl) ||
					!strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), tt.wantMsg) || !strings.Contains(err.Error(), "repository "+srv.URL()) {
					t.Errorf("err = %v (kind %v), want a 429 RateLimited naming %s and %q, not ErrNotFound", err, errdefs.KindOf(err), srv.URL(), tt.wantMsg)
				}
				// Not remembered as missing: the next run, unthrottled, works
				// (this one honours the Retry-After: TestRateLimitBlocksHost).
				srv.SetFault(pom, nil)
				if _, err := testSource(t, []string{srv.URL()}, ChecksumWarn, tt.opts...).POM(context.Background(), "org.x", "m", "1.0"); err != nil {
					t.Errorf("after the throttling stopped: %v", err)
				}
			case err != nil:
				t.Fatal(err)
			}
			if n := srv.Count(pom); n < tt.wantCount || (!tt.wantErr && n != tt.wantCount) {
				t.Errorf("%d requests, want %d", n, tt.wantCount)
			}
			if took < tt.minTime || took > tt.maxTime {
				t.Errorf("took %s, want between %s and %s", took, tt.minTime, tt.maxTime)
			}
			t.Logf("took %s", took.Round(time.Millisecond))
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Now()
	tests := []struct {
		in       string
		min, max time.Duration
	}{
		{"", 0, 0},
		{"1", time.Second, time.Second},
		{" 2 ", 2 * time.Second, 2 * time.Second},
		{"1800", 30 * time.Minute, 30 * time.Minute},
		{"99999999999999999999", maxRetryAfter, maxRetryAfter}, // beyond int64: bounded
		{"9223372036854775807", maxRetryAfter, maxRetryAfter},
		{"-5", 0, 0},
		{"soon", 0, 0},
		{now.Add(-time.Hour).UTC().Format(http.TimeFormat), 0, 0},
		{now.Add(time.Hour).UTC().Format(http.TimeFormat), 59 * time.Minute, time.Hour},
		{now.Add(5 * time.Second).UTC().Format(http.TimeFormat), 3 * time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got < tt.min || got > tt.max {
			t.Errorf("parseRetryAfter(%q) = %s, want %s..%s", tt.in, got, tt.min, tt.max)
		}
	}
}
