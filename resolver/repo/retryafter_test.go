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
		{name: "429 Retry-After 3600 is capped", fault: func() mavenhttp.Fault { return mavenhttp.Status(429, 1, "Retry-After", "3600") },
			opts: []Option{WithMaxRetryAfter(300 * time.Millisecond)}, wantCount: 2, minTime: 300 * time.Millisecond, maxTime: 5 * time.Second},
		{name: "a wait past the deadline ends the retries", fault: func() mavenhttp.Fault { return mavenhttp.Status(429, -1, "Retry-After", "3600") },
			timeout: 2 * time.Second, wantErr: true, wantCount: 1, maxTime: 1500 * time.Millisecond},
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
				if errors.Is(err, ErrNotFound) || errdefs.KindOf(err) != errdefs.Unavailable || !strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), "deadline") {
					t.Errorf("err = %v (code %d), want a 429 Unavailable that names the deadline and is not ErrNotFound", err, errdefs.KindOf(err))
				}
				// Not remembered as missing: the next lookup, unthrottled, works.
				srv.SetFault(pom, nil)
				if _, err := s.POM(context.Background(), "org.x", "m", "1.0"); err != nil {
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

func TestRetryAfterParse(t *testing.T) {
	f := &fetcher{backoff: 200 * time.Millisecond, maxRetryAfter: 30 * time.Second}
	tests := []struct {
		in       string
		min, max time.Duration
	}{
		{"", 200 * time.Millisecond, 200 * time.Millisecond},
		{"1", time.Second, time.Second},
		{" 2 ", 2 * time.Second, 2 * time.Second},
		{"3600", 30 * time.Second, 30 * time.Second},
		{"99999999999999999999", 30 * time.Second, 30 * time.Second}, // beyond int64: still capped
		{"9223372036854775807", 30 * time.Second, 30 * time.Second},
		{"-5", 200 * time.Millisecond, 200 * time.Millisecond},
		{"soon", 200 * time.Millisecond, 200 * time.Millisecond},
		{time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 200 * time.Millisecond, 200 * time.Millisecond},
		{time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), 30 * time.Second, 30 * time.Second},
		{time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat), 3 * time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		if got := f.retryAfter(tt.in); got < tt.min || got > tt.max {
			t.Errorf("retryAfter(%q) = %s, want %s..%s", tt.in, got, tt.min, tt.max)
		}
	}
}
