package layers

import (
	"context"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/prebake/prebake/errdefs"
)

// PlatformFiles are the layers of one platform of a BuildImage image, each
// a list of files.
type PlatformFiles struct {
	Platform string // "linux/amd64", "linux/arm64/v8"
	Layers   [][]File
}

// BuildSpec describes an image built from files (prebake's own image: a
// static binary and CA certificates on scratch; the synthetic Spark base of
// the tests).
type BuildSpec struct {
	// Base is a reference, or "" for scratch.
	Base string
	// Target is a registry reference or oci:PATH[:tag]; it must have a tag.
	Target string
	// Platforms: one gives an image, several give an OCI index.
	Platforms   []PlatformFiles
	Entrypoint  []string
	Cmd         []string
	Env         []string
	WorkingDir  string
	User        string
	Labels      map[string]string
	Annotations map[string]string
}

// Built is what BuildImage wrote.
type Built struct {
	Ref    string        `json:"ref"`    // repo@sha256:…
	Digest string        `json:"digest"` // image or index digest
	Images []BuiltImage  `json:"images"`
	Took   time.Duration `json:"-"`
}

// BuiltImage is one platform's image.
type BuiltImage struct {
	Platform string      `json:"platform"`
	Digest   string      `json:"digest"`
	Layers   []LayerInfo `json:"layers"`
}

// BuildImage builds a reproducible image (or index) from files and writes it
// to spec.Target. Entries use the reproducible mtime (see Epoch, WithEpoch),
// so the same inputs give the same digest.
func BuildImage(ctx context.Context, spec BuildSpec, opts ...Option) (*Built, error) {
	start := time.Now()
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	defer o.removeTemp()
	if o.compression == "" {
		o.compression = CompressionGzip // images for any runtime: prebake's own, the tests' base
	}
	if err := checkCompression(o.compression); err != nil {
		return nil, err
	}
	if len(spec.Platforms) == 0 {
		return nil, errdefs.Errorf(errdefs.BadArgument, "build %s: no platform", spec.Target)
	}
	tgt, err := parseRef(spec.Target)
	if err != nil {
		return nil, err
	}
	o.scopeAuth(tgt)
	if !hasExplicitTag(spec.Target) || tgt.digest != "" {
		return nil, errdefs.Errorf(errdefs.BadArgument, "build target %s: needs a tag", spec.Target)
	}
	epoch, err := o.layerEpoch()
	if err != nil {
		return nil, err
	}
	var b *base
	if spec.Base != "" {
		br, err := parseRef(spec.Base)
		if err != nil {
			return nil, err
		}
		if b, err = loadBase(ctx, br, o); err != nil {
			return nil, err
		}
	}
	out := &Built{}
	var imgs []platformImage
	for _, pf := range spec.Platforms {
		p, err := v1.ParsePlatform(pf.Platform)
		if err != nil {
			return nil, errdefs.Errorf(errdefs.BadArgument, "platform %q: %w", pf.Platform, err)
		}
		img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		if b != nil {
			sel, err := selectImages(b, []v1.Platform{*p}, spec.Base)
			if err != nil {
				return nil, err
			}
			img = sel[0].img
		}
		bi := BuiltImage{Platform: p.String(), Layers: []LayerInfo{}}
		for _, files := range pf.Layers {
			l, err := buildLayer(ctx, files, epoch, o)
			if err != nil {
				return nil, err
			}
			if img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "prebake build"}, Annotations: layerAnnotations(l)}); err != nil {
				return nil, errdefs.New(errdefs.Internal, err)
			}
			names := make([]string, len(files))
			for i, f := range files {
				names[i] = f.Name
			}
			bi.Layers = append(bi.Layers, LayerInfo{Digest: l.digest.String(), DiffID: l.diffID.String(), Size: l.size, Files: names})
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, errdefs.New(errdefs.Internal, err)
		}
		cf = cf.DeepCopy()
		cf.Architecture, cf.OS, cf.Variant, cf.OSVersion = p.Architecture, p.OS, p.Variant, p.OSVersion
		cf.Created = v1.Time{Time: epoch}
		if spec.Entrypoint != nil {
			cf.Config.Entrypoint = spec.Entrypoint
		}
		if spec.Cmd != nil {
			cf.Config.Cmd = spec.Cmd
		}
		if spec.Env != nil {
			cf.Config.Env = spec.Env
		}
		if spec.WorkingDir != "" {
			cf.Config.WorkingDir = spec.WorkingDir
		}
		if spec.User != "" {
			cf.Config.User = spec.User
		}
		if spec.Labels != nil {
			cf.Config.Labels = spec.Labels
		}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, errdefs.New(errdefs.Internal, err)
		}
		if len(spec.Annotations) > 0 {
			img = mutate.Annotations(img, spec.Annotations).(v1.Image)
		}
		d, err := img.Digest()
		if err != nil {
			return nil, errdefs.New(errdefs.Internal, err)
		}
		bi.Digest = d.String()
		out.Images = append(out.Images, bi)
		imgs = append(imgs, platformImage{desc: v1.Descriptor{Platform: p}, img: img})
	}
	var w writable
	if len(imgs) == 1 {
		w.img = imgs[0].img
	} else {
		idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), indexAddenda(imgs)...)
		if len(spec.Annotations) > 0 {
			idx = mutate.Annotations(idx, spec.Annotations).(v1.ImageIndex)
		}
		w.idx = idx
	}
	d, err := w.digest()
	if err != nil {
		return nil, errdefs.New(errdefs.Internal, fmt.Errorf("build %s: %w", spec.Target, err))
	}
	if err := write(ctx, tgt, w, o); err != nil {
		return nil, err
	}
	out.Digest, out.Ref, out.Took = d.String(), tgt.digestRef(d), time.Since(start)
	return out, nil
}

func indexAddenda(imgs []platformImage) []mutate.IndexAddendum {
	adds := make([]mutate.IndexAddendum, len(imgs))
	for i, pi := range imgs {
		adds[i] = mutate.IndexAddendum{Add: pi.img, Descriptor: v1.Descriptor{Platform: pi.desc.Platform, Annotations: pi.desc.Annotations}}
	}
	return adds
}
