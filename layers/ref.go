package layers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/prebake/prebake/errdefs"
)

// OCIPrefix marks a reference to an OCI image layout on disk: oci:PATH[:tag]
// or oci:PATH@sha256:….
const OCIPrefix = "oci:"

// refNameAnnotation names a manifest in an OCI layout's index.json.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// ref is a parsed REF: an OCI layout (path, optional tag or digest) or a
// registry reference.
type ref struct {
	raw    string
	path   string // OCI layout directory; "" for a registry reference
	tag    string // OCI layout tag
	digest string // OCI layout digest (sha256:…)
	name   name.Reference
}

func parseRef(s string) (*ref, error) {
	if s == "" {
		return nil, errdefs.Errorf(errdefs.BadArgument, "empty image reference")
	}
	if p, ok := strings.CutPrefix(s, OCIPrefix); ok {
		r := &ref{raw: s}
		if i := strings.LastIndex(p, "@sha256:"); i >= 0 {
			r.path, r.digest = p[:i], p[i+1:]
			if _, err := v1.NewHash(r.digest); err != nil {
				return nil, errdefs.Errorf(errdefs.BadArgument, "image reference %q: %w", s, err)
			}
		} else if i := strings.LastIndex(p, ":"); i >= 0 && !strings.ContainsAny(p[i+1:], `/\`) {
			r.path, r.tag = p[:i], p[i+1:]
		} else {
			r.path = p
		}
		if r.path == "" {
			return nil, errdefs.Errorf(errdefs.BadArgument, "image reference %q: empty layout path", s)
		}
		return r, nil
	}
	n, err := name.ParseReference(s, name.WeakValidation)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.BadArgument, "image reference %q: %w", s, err)
	}
	return &ref{raw: s, name: n}, nil
}

func (r *ref) isLayout() bool { return r.path != "" }

func (r *ref) String() string { return r.raw }

// repo is the reference without tag or digest: the repository for a
// registry, oci:PATH for a layout.
func (r *ref) repo() string {
	if r.isLayout() {
		return OCIPrefix + r.path
	}
	return r.name.Context().Name()
}

// withTag returns the same repository with tag.
func (r *ref) withTag(tag string) (*ref, error) {
	if r.isLayout() {
		return &ref{raw: OCIPrefix + r.path + ":" + tag, path: r.path, tag: tag}, nil
	}
	t, err := name.NewTag(r.name.Context().Name()+":"+tag, name.WeakValidation)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.BadArgument, "tag %q: %w", tag, err)
	}
	return &ref{raw: t.String(), name: t}, nil
}

// hasTagOrDigest reports whether the user named a tag or digest (a bare
// repository means "derive the tag").
func hasExplicitTag(s string) bool {
	if p, ok := strings.CutPrefix(s, OCIPrefix); ok {
		if strings.Contains(p, "@sha256:") {
			return true
		}
		i := strings.LastIndex(p, ":")
		return i >= 0 && !strings.ContainsAny(p[i+1:], `/\`)
	}
	if strings.Contains(s, "@") {
		return true
	}
	last := s[strings.LastIndex(s, "/")+1:]
	return strings.Contains(last, ":")
}

// digestRef is repo@digest.
func (r *ref) digestRef(d v1.Hash) string {
	return r.repo() + "@" + d.String()
}

// openLayout opens the OCI layout of r.
func (r *ref) openLayout() (layout.Path, error) {
	p, err := layout.FromPath(r.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errdefs.New(errdefs.NotFound, fmt.Errorf("image %s: no OCI layout at %s: %w", r.raw, r.path, err))
		}
		return "", errdefs.New(errdefs.Invalid, fmt.Errorf("image %s: %w", r.raw, err))
	}
	return p, nil
}

// layoutDescriptor finds the manifest r names in its layout: by digest, by
// tag (the ref.name annotation), or the only manifest when r has neither.
func (r *ref) layoutDescriptor(p layout.Path) (*v1.Descriptor, error) {
	ii, err := p.ImageIndex()
	if err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("image %s: %w", r.raw, err))
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("image %s: %w", r.raw, err))
	}
	var found []v1.Descriptor
	for _, d := range im.Manifests {
		switch {
		case r.digest != "":
			// The same manifest under two tags is one manifest.
			if d.Digest.String() == r.digest && len(found) == 0 {
				found = append(found, d)
			}
		case r.tag != "":
			if d.Annotations[refNameAnnotation] == r.tag {
				found = append(found, d)
			}
		default:
			found = append(found, d)
		}
	}
	switch len(found) {
	case 0:
		return nil, errdefs.Errorf(errdefs.NotFound, "image %s: not found in the OCI layout %s", r.raw, r.path)
	case 1:
		return &found[0], nil
	}
	return nil, errdefs.Errorf(errdefs.BadArgument, "image %s: the OCI layout %s holds %d manifests; name one with :tag or @sha256:…", r.raw, r.path, len(found))
}

// openDescriptor opens r's layout and finds the manifest r names in it.
func (r *ref) openDescriptor() (layout.Path, *v1.Descriptor, error) {
	p, err := r.openLayout()
	if err != nil {
		return "", nil, err
	}
	d, err := r.layoutDescriptor(p)
	return p, d, err
}

// base is a base image or index.
type base struct {
	desc v1.Descriptor // digest and media type of what REF names
	img  v1.Image      // set for an image
	idx  v1.ImageIndex // set for an index
}

func isIndex(mt types.MediaType) bool {
	return mt == types.OCIImageIndex || mt == types.DockerManifestList
}

// loadBase reads what r names, lazily for registries.
func loadBase(ctx context.Context, r *ref, o *options) (*base, error) {
	if r.isLayout() {
		p, d, err := r.openDescriptor()
		if err != nil {
			return nil, err
		}
		b := &base{desc: *d}
		if isIndex(d.MediaType) {
			b.idx, err = p.ImageIndex()
			if err == nil {
				b.idx, err = b.idx.ImageIndex(d.Digest)
			}
		} else {
			b.img, err = p.Image(d.Digest)
		}
		if err != nil {
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("image %s: %w", r.raw, err))
		}
		return b, nil
	}
	desc, err := remote.Get(r.name, o.remoteOptions(remote.WithContext(ctx))...)
	if err != nil {
		return nil, registryError(err, "reading image "+r.raw)
	}
	if err := checkManifest("reading image "+r.raw, string(desc.MediaType), desc.Manifest); err != nil {
		return nil, err
	}
	b := &base{desc: desc.Descriptor}
	if isIndex(desc.MediaType) {
		b.idx, err = desc.ImageIndex()
	} else {
		b.img, err = desc.Image()
	}
	if err != nil {
		return nil, registryError(err, "reading image "+r.raw)
	}
	return b, nil
}

// headDigest returns the descriptor of what r names with at most one
// registry request (none for a layout or a digest reference).
func headDigest(ctx context.Context, r *ref, o *options) (*v1.Descriptor, error) {
	if r.isLayout() {
		_, d, err := r.openDescriptor()
		return d, err
	}
	if d, ok := r.name.(name.Digest); ok {
		h, err := v1.NewHash(d.DigestStr())
		if err != nil {
			return nil, errdefs.Errorf(errdefs.BadArgument, "image reference %q: %w", r.raw, err)
		}
		return &v1.Descriptor{Digest: h}, nil // no request: the digest names it
	}
	desc, err := remote.Head(r.name, o.remoteOptions(remote.WithContext(ctx))...)
	if err != nil {
		return nil, registryError(err, "reading image "+r.raw)
	}
	return desc, nil
}
