package noanswer

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// trickle answers 200 with size bytes, one every gap.
func trickle(size int, gap time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		for range size {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(gap):
			}
		}
	}
}

func TestLimits(t *testing.T) {
	srv := httptest.NewServer(trickle(1000, 50*time.Millisecond))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		kind   Kind
		buffer int64
		window time.Duration
		want   string // in the error
		inDo   bool   // the error comes from Do (read ahead)
	}{
		{"small deadline", Small, 0, time.Second, "did not send the whole response within 300ms", false},
		{"small read ahead", Small, 1 << 20, time.Second, "did not send the whole response within 300ms", true},
		{"stream rate", Stream, 0, 200 * time.Millisecond, "under the minimum of 1000 bytes/s", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Limits{What: "test", Classify: func(*http.Request) Kind { return tc.kind },
				Deadline: 300 * time.Millisecond, MinRate: 1000, Window: tc.window, MaxBuffer: tc.buffer}
			c := &http.Client{Transport: SlowTransport{RT: http.DefaultTransport, Limits: l}}
			start := time.Now()
			resp, err := c.Get(srv.URL)
			if err == nil {
				if tc.inDo {
					t.Fatal("Do returned; want the error from the read ahead")
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			} else if !tc.inDo {
				t.Fatalf("Do: %v; want the error from the body", err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %s", took)
			}
			var se *SlowError
			var ne net.Error
			if !errors.As(err, &se) || !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("error %v (%T): want a *SlowError, a net.Error timeout", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want %q", err, tc.want)
			}
		})
	}
}

// TestLimitsFast: a quick answer passes under every kind, and Wrap keeps
// a *SlowError as it is.
func TestLimitsFast(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	for _, k := range []Kind{Pass, Small, Stream} {
		l := Limits{Classify: func(*http.Request) Kind { return k }, Deadline: time.Second, MinRate: 1000, Window: 100 * time.Millisecond, MaxBuffer: 3}
		c := &http.Client{Transport: SlowTransport{RT: http.DefaultTransport, Limits: l}}
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatalf("kind %d: %v", k, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "hello" {
			t.Errorf("kind %d: %q, %v", k, b, err)
		}
	}
	se := &SlowError{Host: "h", Deadline: time.Second}
	r := httptest.NewRequest("GET", "http://h/", nil)
	if got := Wrap(r, "x", time.Second, se); got != se {
		t.Errorf("Wrap(*SlowError) = %v", got)
	}
}
