package pipeline

import (
	"context"

	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit/rewrite"
)

// AppSource is FindSet as a rewrite.AppSource, for rewrite.Manifest: each
// document's packages and, when py gives a request for the document's
// image (a nil request: jars only), its Python half resolved into one
// lock, with the URLs and Python settings the finder holds for it (f nil:
// none). The operator submits in cluster mode, so no driver runs here and
// no wheels are unpacked on this host. py nil is jars only (a lock with
// wheels still ships them, as FindSet does).
func AppSource(req resolver.Request, f SetFinder, rep *progress.Reporter, py func(ctx context.Context, app rewrite.ManifestApp) (*PythonRequest, error)) rewrite.AppSource {
	return rewrite.AppSourceFunc(func(ctx context.Context, app rewrite.ManifestApp) (*rewrite.Jars, error) {
		var r *PythonRequest
		if py != nil {
			var err error
			if r, err = py(ctx, app); err != nil {
				return nil, err
			}
		}
		return findSet(ctx, req, app.Packages, r, nil, f, rep)
	})
}
