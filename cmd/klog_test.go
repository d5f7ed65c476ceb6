package cmd

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// TestKlogRouted is audit 4 L5: client-go's klog lines ("E… request.go:1198]
// Unexpected error when reading response body") no longer reach stderr as
// they are; with -v they come through the redactor.
func TestKlogRouted(t *testing.T) {
	var b strings.Builder
	t.Cleanup(func() { routeKlog(nil, false) })
	routeKlog(&b, false)
	klog.ErrorS(errors.New("context deadline exceeded"), "Unexpected error when reading response body")
	klog.Flush()
	if b.Len() != 0 {
		t.Errorf("without -v: %q", b.String())
	}
	routeKlog(&b, true)
	klog.ErrorS(errors.New("Unauthorized: token Bearer KLOGTOKEN123"), "Unexpected error when reading response body", "body", "password: KLOGSECRET")
	klog.Flush()
	got := b.String()
	if !strings.HasPrefix(got, "client-go: ") || !strings.Contains(got, "Unexpected error when reading response body") ||
		strings.Contains(got, "KLOGTOKEN123") || strings.Contains(got, "KLOGSECRET") {
		t.Errorf("with -v: %q", got)
	}
	if strings.Count(got, "\n") != 1 {
		t.Errorf("want one line: %q", got)
	}
}
