package cmd

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
)

// TestS3HugeErrorMessageBounded is audit 3 N11 (fakes3.py bigxmlerr): a 403
// whose <Message> is 5 MB printed 5,000,380 bytes on stderr. The server's
// message is cut (redact.MaxMessage): stderr stays under 2 KB, exit 77.
func TestS3HugeErrorMessageBounded(t *testing.T) {
	root, tmp := isolatedCLI(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "AWSS3CRETVALUE")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(tmp, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(tmp, "none"))
	msg := strings.Repeat("x", 5_000_000)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>%s</Message></Error>`, msg)
	}))
	defer s.Close()
	lock := filepath.Join(tmp, "prebake.lock")
	demo := "file://" + filepath.Join(root, "testdata", "demo-repo") + "/"
	if code, _, errs := runPrebake(context.Background(), "resolve", "-q", "--no-default-repositories", "--repositories", demo, "--lock", lock, "org.slf4j:slf4j-api:2.0.7"); code != 0 {
		t.Fatalf("resolve for the lock: exit %d\n%s", code, errs)
	}
	start := time.Now()
	code, _, stderr := runPrebake(context.Background(), "bake", "s3", "-q", "--lock", lock, "--store", "s3://bucket/prefix", "--endpoint", s.URL, "--path-style")
	t.Logf("exit %d after %s, %d bytes on stderr", code, time.Since(start).Round(time.Millisecond), len(stderr))
	if code != exitcode.NoPerm {
		t.Errorf("exit %d, want 77", code)
	}
	if len(stderr) >= 2048 || !strings.Contains(stderr, "bytes)") {
		t.Errorf("stderr is %d bytes (want < 2048, the message cut):\n%.3000s", len(stderr), stderr)
	}
}
