package redirect

import (
	"net/http"
	"net/url"
	"testing"
)

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"http://h/x", "http://h/y", true},
		{"http://h/x", "http://h:80/y", true},
		{"https://H:443/x", "https://h/y", true},
		{"http://h:1/x", "http://h:2/x", false},
		{"https://h/x", "http://h/x", false},
		{"http://h/x", "https://h:80/x", false},
		{"http://a/x", "http://b/x", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := SameOrigin(a, b); got != tc.want {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestSameOriginOnly: only a 307/308 to the same origin is followed.
func TestSameOriginOnly(t *testing.T) {
	first, _ := http.NewRequest("GET", "http://h:1/k", nil)
	for _, tc := range []struct {
		to     string
		status int
		follow bool
	}{
		{"http://h:1/other", 307, true},
		{"http://h:1/other", 308, true},
		{"http://h:1/other", 302, false},
		{"http://h:2/k", 307, false},
		{"http://g:1/k", 307, false},
	} {
		req, _ := http.NewRequest("GET", tc.to, nil)
		req.Response = &http.Response{StatusCode: tc.status}
		err := SameOriginOnly(req, []*http.Request{first})
		if got := err == nil; got != tc.follow {
			t.Errorf("%d to %s: followed %v, want %v (%v)", tc.status, tc.to, got, tc.follow, err)
		}
	}
}
