package layers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/prebake/prebake/errdefs"
)

// TitleAnnotation names a blob of an artifact (a file name), as ORAS does.
const TitleAnnotation = "org.opencontainers.image.title"

// ArtifactBlob is one blob of an OCI artifact: a file, stored as it is (no
// tar, no compression), named by its TitleAnnotation.
type ArtifactBlob struct {
	Title     string
	MediaType string
	Sha256    string // hex
	Size      int64
	// Open reads the blob's bytes. On a pulled artifact, it reads them
	// from the registry or layout unverified: the caller checks them
	// against Sha256 (pipeline/bundle stages them, hashed).
	Open func() (io.ReadCloser, error)
}

// Artifact is an OCI image manifest that carries files, not a file system
// (the OCI 1.1 artifact guidance): ArtifactType names what it is, the
// config blob is Config (of ConfigMediaType) and each blob a file.
type Artifact struct {
	ArtifactType    string
	ConfigMediaType string
	Config          []byte
	Annotations     map[string]string
	Blobs           []ArtifactBlob
	// Tag is the tag written when the reference names none.
	Tag string
}

// artifactImage is an Artifact as a go-containerregistry image.
type artifactImage struct {
	a        *Artifact
	manifest []byte
	blobs    map[v1.Hash]*artifactLayer
}

func (i *artifactImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (i *artifactImage) RawConfigFile() ([]byte, error)      { return i.a.Config, nil }
func (i *artifactImage) RawManifest() ([]byte, error)        { return i.manifest, nil }
func (i *artifactImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if l, ok := i.blobs[h]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("artifact: no blob %s", h)
}

// artifactLayer is a blob stored as it is: its digest is its diff ID.
type artifactLayer struct{ b ArtifactBlob }

func (l *artifactLayer) Digest() (v1.Hash, error) {
	return v1.Hash{Algorithm: "sha256", Hex: l.b.Sha256}, nil
}
func (l *artifactLayer) DiffID() (v1.Hash, error) { return l.Digest() }
func (l *artifactLayer) Size() (int64, error)     { return l.b.Size, nil }
func (l *artifactLayer) MediaType() (types.MediaType, error) {
	return types.MediaType(l.b.MediaType), nil
}
func (l *artifactLayer) Compressed() (io.ReadCloser, error)   { return l.b.Open() }
func (l *artifactLayer) Uncompressed() (io.ReadCloser, error) { return l.b.Open() }
func (l *artifactLayer) Exists() (bool, error)                { return false, nil }
func (l *artifactLayer) desc() v1.Descriptor {
	return v1.Descriptor{MediaType: types.MediaType(l.b.MediaType), Size: l.b.Size,
		Digest: v1.Hash{Algorithm: "sha256", Hex: l.b.Sha256}, Annotations: map[string]string{TitleAnnotation: l.b.Title}}
}

// image builds the manifest of a: the same artifact always gives the same
// bytes, hence the same digest.
func (a *Artifact) image() (*artifactImage, error) {
	cs := sha256.Sum256(a.Config)
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  a.ArtifactType,
		Config: v1.Descriptor{MediaType: types.MediaType(a.ConfigMediaType), Size: int64(len(a.Config)),
			Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(cs[:])}},
		Layers:      []v1.Descriptor{},
		Annotations: a.Annotations,
	}
	img := &artifactImage{a: a, blobs: map[v1.Hash]*artifactLayer{}}
	for _, b := range a.Blobs {
		if _, err := hex.DecodeString(b.Sha256); err != nil || len(b.Sha256) != 64 {
			return nil, errdefs.Errorf(errdefs.Invalid, "artifact blob %s: sha256 %q is not 64 hex digits", b.Title, b.Sha256)
		}
		l := &artifactLayer{b: b}
		m.Layers = append(m.Layers, l.desc())
		img.blobs[v1.Hash{Algorithm: "sha256", Hex: b.Sha256}] = l
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, errdefs.New(errdefs.Internal, err)
	}
	img.manifest = raw
	return img, nil
}

// ArtifactDigest is the manifest digest a's push would give (sha256:…),
// computed without writing anything.
func ArtifactDigest(a *Artifact) (string, error) {
	img, err := a.image()
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(img.manifest)
	return "sha256:" + hex.EncodeToString(s[:]), nil
}

// PushArtifact writes a to refStr: a registry reference (pushed: blobs the
// registry has are skipped) or oci:DIR[:tag] (an OCI image layout,
// created if missing). A reference without a tag gets a.Tag. It returns
// the reference by digest (repo@sha256:…).
func PushArtifact(ctx context.Context, refStr string, a *Artifact, opts ...Option) (string, error) {
	o, err := makeOptions(opts...)
	if err != nil {
		return "", err
	}
	defer o.removeTemp()
	r, err := parseRef(refStr)
	if err != nil {
		return "", err
	}
	if !hasExplicitTag(refStr) && a.Tag != "" {
		if r, err = r.withTag(a.Tag); err != nil {
			return "", err
		}
	}
	o.scopeAuth(r)
	ai, err := a.image()
	if err != nil {
		return "", err
	}
	img, err := partial.CompressedToImage(ai)
	if err != nil {
		return "", errdefs.New(errdefs.Internal, err)
	}
	if err := write(ctx, r, writable{img: img}, o); err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", errdefs.New(errdefs.Internal, err)
	}
	return r.digestRef(d), nil
}

// PulledArtifact is an artifact read by PullArtifact: its manifest is
// parsed and bounded, its config read and checked against its digest,
// its blobs not yet read.
type PulledArtifact struct {
	// Ref is the reference by digest (repo@sha256:…).
	Ref             string
	ArtifactType    string
	ConfigMediaType string
	Config          []byte
	Annotations     map[string]string
	Blobs           []ArtifactBlob
}

// PullArtifact reads the manifest refStr names (a registry reference or
// oci:DIR[:tag|@sha256:…]): an OCI image manifest of at most maxManifest
// bytes whose config is at most maxConfig bytes. Blobs are opened lazily.
// A manifest that is not an artifact's (an index, a Docker manifest, a
// layer that is not sha256) is errdefs.Invalid.
func PullArtifact(ctx context.Context, refStr string, maxManifest, maxConfig int64, opts ...Option) (*PulledArtifact, error) {
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	r, err := parseRef(refStr)
	if err != nil {
		return nil, err
	}
	o.scopeAuth(r)
	var img v1.Image
	var size int64
	if r.isLayout() {
		p, d, err := r.openDescriptor()
		if err != nil {
			return nil, err
		}
		if d.MediaType != types.OCIManifestSchema1 {
			return nil, errdefs.Errorf(errdefs.Invalid, "artifact %s: media type %s is not an OCI image manifest", refStr, d.MediaType)
		}
		if size = d.Size; size > maxManifest {
			return nil, errdefs.Errorf(errdefs.Invalid, "artifact %s: the manifest has %d bytes, more than %d", refStr, size, maxManifest)
		}
		if img, err = p.Image(d.Digest); err != nil {
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("artifact %s: %w", refStr, err))
		}
	} else {
		desc, err := remote.Get(r.name, o.remoteOptions(remote.WithContext(ctx))...)
		if err != nil {
			return nil, registryError(err, "reading artifact "+refStr)
		}
		if desc.MediaType != types.OCIManifestSchema1 {
			return nil, errdefs.Errorf(errdefs.Invalid, "artifact %s: media type %s is not an OCI image manifest", refStr, desc.MediaType)
		}
		if size = int64(len(desc.Manifest)); size > maxManifest {
			return nil, errdefs.Errorf(errdefs.Invalid, "artifact %s: the manifest has %d bytes, more than %d", refStr, size, maxManifest)
		}
		if img, err = desc.Image(); err != nil {
			return nil, registryError(err, "reading artifact "+refStr)
		}
	}
	raw, err := img.RawManifest()
	if err != nil {
		return nil, registryError(err, "reading artifact "+refStr)
	}
	var m v1.Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("artifact %s: manifest: %w", refStr, err))
	}
	if m.Config.Size > maxConfig || m.Config.Size < 0 {
		return nil, errdefs.Errorf(errdefs.Invalid, "artifact %s: the config has %d bytes, more than %d", refStr, m.Config.Size, maxConfig)
	}
	if m.Config.Digest.Algorithm != "sha256" {
		return nil, errdefs.Errorf(errdefs.Invalid, "artifact %s: config digest %s is not sha256", refStr, m.Config.Digest)
	}
	d, err := img.Digest()
	if err != nil {
		return nil, registryError(err, "reading artifact "+refStr)
	}
	cfgLayer, err := img.LayerByDigest(m.Config.Digest)
	var cfg []byte
	if err == nil {
		cfg, err = readBlob(cfgLayer, m.Config.Size)
	}
	if err != nil {
		return nil, registryError(err, "reading artifact "+refStr+" config")
	}
	if s := sha256.Sum256(cfg); hex.EncodeToString(s[:]) != m.Config.Digest.Hex || int64(len(cfg)) != m.Config.Size {
		return nil, errdefs.Errorf(errdefs.Invalid, "artifact %s: the config does not match its digest %s", refStr, m.Config.Digest)
	}
	pa := &PulledArtifact{Ref: r.digestRef(d), ArtifactType: m.ArtifactType, ConfigMediaType: string(m.Config.MediaType), Config: cfg, Annotations: m.Annotations}
	for _, l := range m.Layers {
		if l.Digest.Algorithm != "sha256" {
			return nil, errdefs.Errorf(errdefs.Invalid, "artifact %s: blob %s: digest %s is not sha256", refStr, l.Annotations[TitleAnnotation], l.Digest)
		}
		h := l.Digest
		pa.Blobs = append(pa.Blobs, ArtifactBlob{Title: l.Annotations[TitleAnnotation], MediaType: string(l.MediaType), Sha256: h.Hex, Size: l.Size,
			Open: func() (io.ReadCloser, error) {
				layer, err := img.LayerByDigest(h)
				if err != nil {
					return nil, registryError(err, "reading artifact "+refStr+" blob "+h.String())
				}
				rc, err := layer.Compressed()
				if err != nil {
					return nil, registryError(err, "reading artifact "+refStr+" blob "+h.String())
				}
				return rc, nil
			}})
	}
	return pa, nil
}

// readBlob reads a small blob, at most max bytes.
func readBlob(l v1.Layer, max int64) ([]byte, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errdefs.Errorf(errdefs.Invalid, "blob has more than %d bytes", max)
	}
	return data, nil
}
