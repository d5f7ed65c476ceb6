package connect

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

// hostileServer is a Spark Connect server (audit 4 L2's grpcsrv) that
// answers every RPC with handle.
func hostileServer(t *testing.T, handle grpc.StreamHandler) *Remote {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.UnknownServiceHandler(handle), grpc.ForceServerCodec(rawCodec{}))
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	r, err := ParseRemote("sc://" + l.Addr().String() + "/;user_id=u")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPushHostileServer is audit 4 L2: a server that never answers ends
// in a Timeout (the call's deadline, or the push's), and a 3 MiB error
// message quoting a password is redacted and bounded.
func TestPushHostileServer(t *testing.T) {
	hang := func(_ any, stream grpc.ServerStream) error { <-stream.Context().Done(); return stream.Context().Err() }
	bigMsg := "password: GRPCSECRET1 token Bearer GRPCBEARER1 " + strings.Repeat("E ", 3<<20/2)
	bigerr := func(any, grpc.ServerStream) error { return status.Error(codes.Internal, bigMsg) }
	jars := []Jar{{File: "a.jar", Path: "/nonexistent", Sha256: "00", Size: 1}}
	for _, tc := range []struct {
		name    string
		handle  grpc.StreamHandler
		opts    []Option
		kind    errdefs.Kind
		wantMsg string
	}{
		{"hang, call deadline", hang, []Option{WithCallTimeout(200 * time.Millisecond)}, errdefs.Timeout, "did not answer within 200ms"},
		{"hang, push deadline", hang, []Option{WithCallTimeout(0), WithTimeout(300 * time.Millisecond)}, errdefs.Timeout, "took more than 300ms"},
		{"3 MiB error message", bigerr, nil, errdefs.Unavailable, "password: xxxxx token Bearer xxxxx E E"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := hostileServer(t, tc.handle)
			start := time.Now()
			_, err := Push(context.Background(), r, jars, append([]Option{WithRetries(1, time.Millisecond)}, tc.opts...)...)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("Push took %s", took)
			}
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("Push: %v (kind %v), want %v with %q", err, errdefs.KindOf(err), tc.kind, tc.wantMsg)
			}
			if msg := err.Error(); len(msg) > redact.MaxResultMessage+200 || strings.Contains(msg, "GRPCSECRET1") || strings.Contains(msg, "GRPCBEARER1") {
				t.Errorf("error of %d bytes: %.300s", len(msg), msg)
			}
		})
	}
}
