package layers

import (
	"context"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/prebake/prebake/errdefs"
)

// HasTagOrDigest reports whether refStr (a registry reference or
// oci:DIR[:tag|@sha256:…]) names a tag or a digest; a bare repository does
// not.
func HasTagOrDigest(refStr string) bool { return hasExplicitTag(refStr) }

// maxTags bounds the tags ListTags returns: a repository's tag list is
// the registry's answer, of any length.
const maxTags = 10000

// ListTags returns the tags of the registry repository refStr names (its
// tag or digest, if any, ignored), as the registry lists them, with the
// same credentials and transport as a pull. A missing repository is
// errdefs.NotFound; an OCI layout is errdefs.BadArgument.
func ListTags(ctx context.Context, refStr string, opts ...Option) ([]string, error) {
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	r, err := parseRef(refStr)
	if err != nil {
		return nil, err
	}
	if r.isLayout() {
		return nil, errdefs.Errorf(errdefs.BadArgument, "listing the tags of %s: not a registry repository", refStr)
	}
	o.scopeAuth(r)
	tags, err := remote.List(r.name.Context(), o.remoteOptions(remote.WithContext(ctx))...)
	if err != nil {
		return nil, registryError(err, "listing the tags of "+r.repo())
	}
	if len(tags) > maxTags {
		tags = tags[:maxTags]
	}
	return tags, nil
}
