package layers

import (
	"context"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/prebake/prebake/errdefs"
)

// PingRegistry checks that the registry of ref (a reference or a
// repository; an oci: layout needs no registry and is nil) answers its
// /v2/ ping and grants the credentials in use (WithBasicAuth, else the
// Docker config keychain) a token for ref's repository, with push (push)
// or pull scope: one ping and at most one token request, no retry. The
// error is typed as a bake's registry errors are (Unavailable, Denied, …).
func PingRegistry(ctx context.Context, ref string, push bool, opts ...Option) error {
	r, err := parseRef(ref)
	if err != nil || r.isLayout() {
		return err
	}
	o, err := makeOptions(opts...)
	if err != nil {
		return err
	}
	o.scopeAuth(r)
	repo := r.name.Context()
	auth := o.auth
	if auth == nil {
		if auth, err = authn.Resolve(ctx, o.keychain, repo.Registry); err != nil {
			return errdefs.New(errdefs.Denied, err)
		}
	}
	scope := transport.PullScope
	if push {
		scope = transport.PushScope
	}
	what := "registry " + repo.RegistryStr()
	rt, err := transport.NewWithContext(ctx, repo.Registry, auth, o.roundTripper(), []string{repo.Scope(scope)})
	if err != nil {
		return registryError(err, what)
	}
	// A Basic-auth registry is not asked for a token: GET /v2/ with the
	// credentials tells whether it takes them.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, repo.Registry.Scheme()+"://"+repo.RegistryStr()+"/v2/", nil)
	if err != nil {
		return errdefs.New(errdefs.BadArgument, err)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return registryError(err, what)
	}
	resp.Body.Close()
	return registryError(transport.CheckError(resp, http.StatusOK), what)
}
