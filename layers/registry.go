package layers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/progress/task"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/safepath"
)

func emptyOpen() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("")), nil }

// countingTransport counts registry requests (not the /v2/ ping nor token
// requests) and the blob bytes uploaded.
type countingTransport struct {
	base     http.RoundTripper
	requests atomic.Int64
	uploaded atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if isAuthRequest(r) {
		return c.base.RoundTrip(r)
	}
	c.requests.Add(1)
	if r.Body != nil && r.Body != http.NoBody && strings.Contains(r.URL.Path, "/blobs/uploads") && (r.Method == http.MethodPatch || r.Method == http.MethodPut || r.Method == http.MethodPost) {
		r2 := r.Clone(r.Context())
		r2.Body = &countingBody{ReadCloser: r.Body, n: &c.uploaded}
		return c.base.RoundTrip(r2)
	}
	return c.base.RoundTrip(r)
}

// isAuthRequest reports the auth handshake: the /v2/ ping and token
// requests (which carry no repository path under /v2/).
func isAuthRequest(r *http.Request) bool {
	p := r.URL.Path
	return p == "/v2/" || p == "/v2" || !strings.HasPrefix(p, "/v2/")
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// writable is an image or an index.
type writable struct {
	img v1.Image
	idx v1.ImageIndex
}

func (w writable) digest() (v1.Hash, error) {
	if w.img != nil {
		return w.img.Digest()
	}
	return w.idx.Digest()
}

// write pushes w to the registry (blobs the target has are skipped, blobs of
// the same registry are mounted, the rest are streamed with o.jobs parallel
// uploads) or writes it into the OCI layout under its tag.
func write(ctx context.Context, t *ref, w writable, o *options) error {
	if t.isLayout() {
		p, err := layout.FromPath(t.path)
		if errors.Is(err, os.ErrNotExist) {
			p, err = layout.Write(t.path, empty.Index)
		}
		if err != nil {
			return errdefs.New(errdefs.CantWrite, fmt.Errorf("OCI layout %s: %w", t.path, err))
		}
		linkBlobs(t.path, o)
		m := match.Annotation(refNameAnnotation, t.tag)
		opt := layout.WithAnnotations(map[string]string{refNameAnnotation: t.tag})
		if w.img != nil {
			err = p.ReplaceImage(w.img, m, opt)
		} else {
			err = p.ReplaceIndex(w.idx, m, opt)
		}
		if err != nil {
			code := errdefs.CantWrite
			var ee *errdefs.Error
			if errors.As(err, &ee) { // a damaged or missing layer blob
				code = ee.Kind
			}
			return errdefs.New(code, fmt.Errorf("writing %s: %w", t, err))
		}
		return nil
	}
	want, derr := w.digest()
	if derr != nil {
		return errdefs.New(errdefs.Internal, derr)
	}
	var tk task.Task
	var pushed int64 // bytes shown as done, over all attempts
	var err error
push:
	for attempt := 1; ; attempt++ {
		err = pushOnce(ctx, t, w, o, &tk, &pushed)
		if err == nil || !pushRace(err) || ctx.Err() != nil {
			break
		}
		// Another push of the same blobs or manifests into this repository
		// is committing: if it has landed our manifest, we are done;
		// otherwise push again (blobs the registry now has are skipped).
		if d, herr := remote.Head(t.name, o.remoteOptions(remote.WithContext(ctx))...); herr == nil && d.Digest == want {
			o.logger.Printf("%s already holds %s (a concurrent push)", t, want)
			err = nil
			break
		}
		if attempt == pushRaceAttempts {
			err = errdefs.New(errdefs.Unavailable, &redactedError{
				msg: fmt.Sprintf("pushing %s: the registry refused the manifest %d times although its blobs were uploaded (another push into this repository at the same time?): %s",
					t, attempt, redact.String(err.Error())),
				err: err})
			break
		}
		o.logger.Printf("pushing %s: %v; retrying (attempt %d of %d)", t, redact.String(err.Error()), attempt+1, pushRaceAttempts)
		select {
		case <-ctx.Done():
			err = ctx.Err()
			break push
		case <-time.After(time.Duration(attempt) * pushRaceBackoff):
		}
	}
	if tk != nil {
		tk.Done(err)
	}
	return registryError(err, "pushing "+t.String())
}

// pushRaceAttempts bounds the pushes of one manifest that fail because a
// concurrent push of the same content has not committed yet.
const pushRaceAttempts = 5

// pushRaceBackoff is the wait before the second push; the n-th waits n times
// it (a var for the tests).
var pushRaceBackoff = 250 * time.Millisecond

// pushRace reports a manifest PUT the registry refused because a blob or a
// child manifest it references is not (yet) readable: what distribution
// answers while another upload of the same blob into the repository
// commits (DIGEST_INVALID with MANIFEST_BLOB_UNKNOWN).
func pushRace(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	for _, d := range te.Errors {
		switch d.Code {
		case transport.ManifestBlobUnknownErrorCode, transport.DigestInvalidErrorCode, transport.BlobUnknownErrorCode:
			return true
		}
	}
	return false
}

// pushOnce is one remote.Write (or WriteIndex) of w; its progress goes to
// *tk (started on the first update of the first attempt), *pushed counting
// the bytes already shown so that a retry does not count them twice.
func pushOnce(ctx context.Context, t *ref, w writable, o *options, tk *task.Task, pushed *int64) error {
	ro := o.remoteOptions(remote.WithContext(ctx))
	var done chan struct{}
	if o.progress != nil {
		ch := make(chan v1.Update, 64)
		done = make(chan struct{})
		ro = append(ro, remote.WithProgress(ch))
		go func() {
			defer close(done)
			for u := range ch { // drained until ggcr closes it
				if *tk == nil {
					*tk = o.startTask("push "+t.String(), u.Total)
				}
				if u.Error == nil && u.Complete > *pushed {
					(*tk).Add(u.Complete - *pushed)
					*pushed = u.Complete
				}
			}
		}()
	}
	var err error
	if w.img != nil {
		err = remote.Write(t.name, w.img, ro...)
	} else {
		err = remote.WriteIndex(t.name, w.idx, ro...)
	}
	if done != nil {
		<-done
	}
	return err
}

// Info is what `prebake inspect` shows of a manifest.
type Info struct {
	Ref        string   `json:"ref"`
	Digest     string   `json:"digest"`
	MediaType  string   `json:"mediaType"`
	LockHash   string   `json:"lockHash"`
	JarsDir    string   `json:"jarsDir"`
	Files      []string `json:"files"`
	Coords     []string `json:"coords"`
	BaseDigest string   `json:"baseDigest"`
	// SparkVersion is the base's Spark version recorded at bake time
	// (dev.prebake.spark-version); "" when not recorded.
	SparkVersion string `json:"sparkVersion,omitempty"`
	// Warnings are the verdict recorded at bake time
	// (dev.prebake.warnings); empty when none, or not recorded.
	Warnings    []Warning         `json:"warnings"`
	Platforms   []string          `json:"platforms"`
	Annotations map[string]string `json:"annotations"`
	Key         string            `json:"-"`
	digest      v1.Hash
}

// manifestAnnotations is the part of a manifest or index we read.
type manifestAnnotations struct {
	MediaType   string            `json:"mediaType"`
	Annotations map[string]string `json:"annotations"`
	Manifests   []v1.Descriptor   `json:"manifests"`
}

func parseInfo(r *ref, raw []byte, d v1.Hash, mt string) (*Info, error) {
	var m manifestAnnotations
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errdefs.Errorf(errdefs.Invalid, "manifest of %s: %w", r, err)
	}
	if m.MediaType != "" {
		mt = m.MediaType
	}
	in := &Info{Ref: r.digestRef(d), Digest: d.String(), MediaType: mt, Annotations: m.Annotations, digest: d, Files: []string{}, Coords: []string{}, Platforms: []string{}}
	if in.Annotations == nil {
		in.Annotations = map[string]string{}
	}
	in.LockHash = in.Annotations[AnnotationLock]
	in.BaseDigest = in.Annotations[AnnotationBaseDigest]
	in.Key = in.Annotations[annotationKey]
	in.SparkVersion = in.Annotations[AnnotationSparkVersion]
	in.Warnings = []Warning{}
	if w, ok := in.Annotations[AnnotationWarnings]; ok {
		if err := json.Unmarshal([]byte(w), &in.Warnings); err != nil {
			return nil, errdefs.Errorf(errdefs.Invalid, "%s: annotation %s: %w", r, AnnotationWarnings, err)
		}
	}
	if c := in.Annotations[AnnotationCoords]; c != "" {
		in.Coords = strings.Split(c, ",")
	}
	if j := in.Annotations[AnnotationJars]; j != "" {
		var ja JarsAnnotation
		if err := json.Unmarshal([]byte(j), &ja); err != nil {
			return nil, errdefs.Errorf(errdefs.Invalid, "%s: annotation %s: %w", r, AnnotationJars, err)
		}
		in.JarsDir = ja.Dir
		if ja.Files != nil {
			in.Files = ja.Files
		}
	}
	for _, md := range m.Manifests {
		if md.Platform != nil {
			in.Platforms = append(in.Platforms, md.Platform.String())
		}
	}
	return in, nil
}

// lookup reads the manifest r names with one request; nil, nil when it does
// not exist.
func lookup(ctx context.Context, r *ref, o *options) (*Info, error) {
	if r.isLayout() {
		p, err := layout.FromPath(r.path)
		if err != nil {
			return nil, nil // no layout yet: a miss
		}
		d, err := r.layoutDescriptor(p)
		if errdefs.KindOf(err) == errdefs.NotFound {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		raw, err := p.Bytes(d.Digest)
		if err != nil {
			return nil, errdefs.Errorf(errdefs.Invalid, "%s: %w", r, err)
		}
		return parseInfo(r, raw, d.Digest, string(d.MediaType))
	}
	desc, err := remote.Get(r.name, o.remoteOptions(remote.WithContext(ctx))...)
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
			return nil, nil
		}
		return nil, registryError(err, "reading "+r.String())
	}
	return parseInfo(r, desc.Manifest, desc.Digest, string(desc.MediaType))
}

// Inspect reads the prebake annotations of the manifest (or index) ref
// names. A missing image is errdefs.NotFound.
func Inspect(ctx context.Context, refStr string, opts ...Option) (*Info, error) {
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	r, err := parseRef(refStr)
	if err != nil {
		return nil, err
	}
	o.scopeAuth(r)
	if r.isLayout() {
		if _, err := r.openLayout(); err != nil {
			return nil, err
		}
	}
	in, err := lookup(ctx, r, o)
	if err != nil {
		return nil, err
	}
	if in == nil {
		return nil, errdefs.Errorf(errdefs.NotFound, "image %s: not found", refStr)
	}
	return in, nil
}

// ReadJars returns the jars directory and the jar file names (in spark.jars
// order) that `bake image` recorded on the image ref names. An image without
// the annotation is errdefs.Invalid.
func ReadJars(ctx context.Context, refStr string, opts ...Option) (dir string, files []string, err error) {
	in, err := Inspect(ctx, refStr, opts...)
	if err != nil {
		return "", nil, err
	}
	if _, ok := in.Annotations[AnnotationJars]; !ok {
		return "", nil, errdefs.Errorf(errdefs.Invalid, "image %s has no %s annotation: bake it with `prebake bake image`", refStr, AnnotationJars)
	}
	for _, f := range in.Files {
		if err := safepath.Name(f); err != nil {
			return "", nil, errdefs.Errorf(errdefs.Invalid, "image %s: annotation %s: %w", refStr, AnnotationJars, err)
		}
	}
	return in.JarsDir, in.Files, nil
}
