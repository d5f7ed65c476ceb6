package cmd

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"

	"github.com/prebake/prebake/internal/redact"
)

// client-go logs through klog ("Unexpected error when reading response
// body" from its request.go, among others): by default on stderr, whatever
// -q says, and unredacted. prebake reports what failed itself (the API
// call's error, redacted), so klog's lines go to stderr only with -v, each
// through the redactor (redact.Line), prefixed "client-go:".

// klogOut is where klog's lines go; nil: nowhere.
var klogOut atomic.Pointer[klogWriter]

type klogWriter struct{ w io.Writer }

func init() {
	klog.SetLogger(funcr.New(func(prefix, args string) {
		if out := klogOut.Load(); out != nil {
			fmt.Fprintf(out.w, "client-go: %s\n", redact.Line(redact.Cut(prefix+" "+args, redact.MaxResultMessage)))
		}
	}, funcr.Options{}))
}

// routeKlog sends klog's lines to stderr when verbose, else nowhere.
func routeKlog(stderr io.Writer, verbose bool) {
	if verbose {
		klogOut.Store(&klogWriter{w: stderr})
		return
	}
	klogOut.Store(nil)
}
