package connect

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

// TestParseRemote: connection strings as Spark's clients read them; a bad
// one is a usage error that never shows the token.
func TestParseRemote(t *testing.T) {
	const sid = "0f8fad5b-d9cb-469f-a165-70867728950e"
	tests := []struct {
		in      string
		want    *Remote
		str     string
		wantErr string
	}{
		{in: "sc://localhost", want: &Remote{Host: "localhost", Port: DefaultPort, Headers: map[string]string{}}, str: "sc://localhost:15002"},
		{in: "sc://10.0.0.5:15003/;user_id=etl;session_id=" + strings.ToUpper(sid) + ";x-team=data",
			want: &Remote{Host: "10.0.0.5", Port: 15003, UserID: "etl", SessionID: sid, Headers: map[string]string{"x-team": "data"}},
			str:  "sc://10.0.0.5:15003/;user_id=etl;session_id=" + sid},
		{in: "sc://[::1]:15002/;token=s3cret;user_agent=ci", want: &Remote{Host: "::1", Port: 15002, Token: "s3cret", UseSSL: true, UserAgent: "ci", Headers: map[string]string{}},
			str: "sc://[::1]:15002/;use_ssl=true"},
		{in: "http://localhost:15002", wantErr: "starts with sc://"},
		{in: "sc://localhost:99999", wantErr: "not a TCP port"},
		{in: "sc://localhost/;session_id=nope;token=s3cret", wantErr: "not a UUID"},
		{in: "sc://localhost/path", wantErr: "the path must be empty"},
		{in: "sc://localhost/;token", wantErr: "token=REDACTED"},
		{in: "sc://", wantErr: "no host"},
		// audit 4 L2: a token never goes in clear text, whatever the order.
		{in: "sc://localhost/;token=s3cret;use_ssl=false", wantErr: "use_ssl=false would send it in clear text"},
		{in: "sc://localhost/;use_ssl=false;token=s3cret", wantErr: "use_ssl=false would send it in clear text"},
		{in: "sc://localhost/;use_ssl=true;token=s3cret", want: &Remote{Host: "localhost", Port: DefaultPort, Token: "s3cret", UseSSL: true, Headers: map[string]string{}}, str: "sc://localhost:15002/;use_ssl=true"},
		{in: "sc://localhost/;use_ssl=false", want: &Remote{Host: "localhost", Port: DefaultPort, Headers: map[string]string{}}, str: "sc://localhost:15002"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRemote(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, errdefs.BadArgument) || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("ParseRemote(%q) = %v, want a usage error with %q and no token", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRemote(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, r); diff != "" {
				t.Errorf("ParseRemote(%q) (-want +got):\n%s", tt.in, diff)
			}
			if got := r.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
		})
	}
	if id := NewSessionID(); !uuidRE.MatchString(id) || id[14] != '4' {
		t.Errorf("NewSessionID() = %q, not a version 4 UUID", id)
	}
}
