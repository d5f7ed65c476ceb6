package layers

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/lock"
)

// Annotation keys on a baked manifest (and index).
const (
	// AnnotationLock holds the lock hash.
	AnnotationLock = "dev.prebake.lock"
	// AnnotationJars holds JarsAnnotation as JSON.
	AnnotationJars = "dev.prebake.jars"
	// AnnotationCoords holds the requested coordinates (the lock's
	// inputs.packages), comma-separated; the artifacts' coordinates when the
	// lock records no inputs.
	AnnotationCoords = "dev.prebake.coords"
	// AnnotationBaseDigest is the OCI annotation for the base's digest.
	AnnotationBaseDigest = "org.opencontainers.image.base.digest"
	// AnnotationSparkVersion holds the base's Spark version as its jars say
	// (Report.BaseSparkVersion), so that a cache hit knows it without
	// reading the base; absent when the base has no spark-core jar.
	AnnotationSparkVersion = "dev.prebake.spark-version"
	// AnnotationWarnings holds the bake's verdict against its base, the
	// Report's warnings as JSON ([] for none), so that every cache hit
	// repeats them.
	AnnotationWarnings = "dev.prebake.warnings"
	// AnnotationShared holds the hash of the shared set (BakeInput.Shared)
	// of a bake that has a shared layer.
	AnnotationShared = "dev.prebake.shared"
)

// ErrStrict is returned (kind Invalid) by a strict bake (BakeInput.Strict)
// that has warnings: the jars are likely to fail at run time on this base.
var ErrStrict = errors.New("warnings that change the outcome, in strict mode")

// DefaultJarsDir is where the jars go in the image.
const DefaultJarsDir = "/opt/spark/prebake/jars"

// JarsAnnotation is the value of dev.prebake.jars.
type JarsAnnotation struct {
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
}

// BakeInput is one bake.
type BakeInput struct {
	// Lock is the resolved set; its jars are in spark.jars order. Its
	// wheels, when it has any, go into one layer of their own above the
	// jars' (python.go).
	Lock *lock.File
	// Jars gives the local files of Lock.Jars(), index for index
	// (lock.LocalJars for files at hand); it is called only on a cache
	// miss.
	Jars lock.Jars
	// Wheels gives the local files of Lock.Wheels(), index for index (the
	// resolver's cache blobs); it is called only on a cache miss, and only
	// for a lock with wheels. Each is checked against the lock's sha256
	// and size before it is installed.
	Wheels lock.Jars
	// PythonDir is the absolute directory the wheels are installed into
	// (one site-packages tree), appended to the image's PYTHONPATH; "" is
	// DefaultPythonDir. It is part of the bake key of a lock with wheels
	// only.
	PythonDir string
	// Base and Target are references: registry or oci:PATH[:tag]. A tag in
	// Target is used as the tag.
	Base, Target string
	// Tag is the target tag; "" derives it from the base digest and the lock.
	Tag string
	// JarsDir is the absolute directory of the jars; "" is DefaultJarsDir.
	JarsDir string
	// Platforms ("linux/amd64") restrict an index base; empty means all.
	// One platform gives an image, several give an index.
	Platforms []string
	// SkipProvided drops the jars that the base has at the same version.
	SkipProvided bool
	// Extra files go in a last layer of their own (e.g. the prebake
	// binary itself). Each needs an ID (its sha256): it is part of the cache key.
	Extra []File
	// ExtraPlatform ("linux/amd64"), when set, is the only platform the
	// Extra files run on: every platform baked must match it.
	ExtraPlatform string
	// SparkHome is where the base keeps Spark ("" is /opt/spark): its jars
	// directory is what the conflict report compares against.
	SparkHome string
	// Strict fails the bake (ErrStrict, kind Invalid) when the report has
	// warnings, before anything is pushed; on a cache hit, when the stored
	// verdict has any.
	Strict bool
	// StrictKinds are the warning kinds Strict fails on (ParseStrict);
	// nil is StrictDefault (every kind but WarnSparkPatch).
	StrictKinds []string
	// Shared, when set, is a shared ("platform") set: the jars of Lock it
	// also has (same file name and sha256) go into one layer of their own,
	// right above the base, and the others into the per-job layer(s) above
	// it (and the Extra files between the two). The shared layer depends
	// only on those jars, the jars directory, the epoch and the
	// compression, so every job lock holding the whole set gets the same
	// layer digest, which a node pulls once. The files, their paths and
	// spark.jars stay what a bake without Shared gives.
	Shared *lock.File
}

// Result is what a bake produced (or found).
type Result struct {
	// Ref is repo@sha256:… (oci:PATH@sha256:… for a layout).
	Ref string `json:"ref"`
	// Digest is the manifest (or index) digest.
	Digest string `json:"digest"`
	// Tag is repo:tag, the tag written (or found).
	Tag string `json:"tag"`
	// CacheHit is true when the target already had the tag and nothing was
	// built or pushed.
	CacheHit   bool   `json:"cacheHit"`
	LockHash   string `json:"lockHash"`
	BaseDigest string `json:"baseDigest"`
	JarsDir    string `json:"jarsDir"`
	// Files are the jar file names in the image, in lock order.
	Files []string `json:"files"`
	// Image is spark.kubernetes.container.image; Jars is spark.jars, split.
	Image string   `json:"image"`
	Jars  []string `json:"jars"`
	// Platforms are the platforms that got the layers ("" for a single
	// image base without a platform in its config).
	Platforms []string    `json:"platforms"`
	Layers    []LayerInfo `json:"layers"`
	// Compression is the layers' compression (none, gzip, zstd, estargz).
	Compression Compression `json:"compression"`
	// SharedMissing are the jars of BakeInput.Shared that the lock lacks
	// (or has with another sha256), in the shared set's order: when not
	// empty, the shared layer differs from the one of a lock that has them.
	// Not recorded on a cache hit.
	SharedMissing []string `json:"sharedMissing,omitempty"`
	// Report is the classpath conflict report (nil on a cache hit).
	Report *Report `json:"report,omitempty"`
	// Warnings are the bake's verdict against its base: Report.Warnings on
	// a bake, the stored ones (AnnotationWarnings) on a cache hit.
	Warnings []Warning `json:"warnings"`
	// SparkVersion is the Spark version of the base's jars (spark-core_*):
	// Report.BaseSparkVersion on a bake, the dev.prebake.spark-version
	// annotation on a cache hit; "" when unknown (no spark-core jar, or an
	// image baked by a prebake that did not record it).
	SparkVersion string `json:"sparkVersion,omitempty"`
	// BytesUploaded counts blob bytes sent to the target registry.
	BytesUploaded int64 `json:"bytesUploaded"`
	// Requests counts registry requests, not counting the auth handshake.
	Requests int64 `json:"registryRequests"`
	// Duration is the wall time of the bake.
	Duration time.Duration `json:"durationNs"`
	// PythonDir is the site-packages directory of the lock's wheels in the
	// image (on its PYTHONPATH); "" for a lock without wheels. Not in the
	// JSON document yet (the CLI does not bake wheels yet).
	PythonDir string `json:"-"`
}

// SparkConf returns the Spark settings to use with the image.
func (r *Result) SparkConf() [][2]string {
	return [][2]string{
		{"spark.kubernetes.container.image", r.Image},
		{"spark.jars", strings.Join(r.Jars, ",")},
	}
}

// jarURLs returns local:// URLs of files in dir.
func jarURLs(dir string, files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = "local://" + path.Join(dir, f)
	}
	return out
}

// bakeKey names the bake: everything that decides the image's bytes.
// v2 records the verdict (AnnotationWarnings), which a v1 bake lacks; the
// Spark home it was made against is part of it.
func bakeKey(baseDigest, lockHash, jarsDir, sparkHome string, platforms []string, skip bool, layers int, big int64, comp Compression, epoch time.Time, extra []File, shared []string, pythonDir string) string {
	h := sha256.New()
	fmt.Fprintf(h, "prebake-bake-v2\nbase %s\nlock %s\ndir %s\nspark %s\nplatforms %s\nskip %t\nlayers %d %d\n%s\nepoch %d\n",
		baseDigest, lockHash, jarsDir, sparkHome, strings.Join(platforms, ","), skip, layers, big, comp.id(), epoch.Unix())
	for _, f := range extra {
		fmt.Fprintf(h, "extra %s %o %d %s\n", f.Name, normMode(f.Mode), f.Size, f.ID)
	}
	if shared != nil { // a bake without a shared set keeps its key
		fmt.Fprintf(h, "shared %d\n", len(shared))
		for _, f := range shared {
			fmt.Fprintf(h, "s %s\n", f)
		}
	}
	if pythonDir != "" { // a lock without wheels keeps its key; the lock hash covers the wheels
		fmt.Fprintf(h, "python %s\n", pythonDir)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CacheTag is the tag derived from the bake key.
func cacheTag(key string) string { return "prebake-" + key[:32] }

func cleanJarsDir(d string) (string, error) {
	if d == "" {
		return DefaultJarsDir, nil
	}
	if !path.IsAbs(d) {
		return "", errdefs.Optionf(errdefs.BadArgument, "layers.BakeInput.JarsDir", "jars directory %q: must be an absolute path", d)
	}
	return path.Clean(d), nil
}

func coordsOf(l *lock.File) string {
	if len(l.Inputs.Packages) > 0 {
		return strings.Join(l.Inputs.Packages, ",")
	}
	jars := l.Jars()
	cs := make([]string, len(jars))
	for i, a := range jars {
		cs[i] = a.Coord
	}
	return strings.Join(cs, ",")
}

// Bake appends the jars of in.Lock to in.Base and writes the result to
// in.Target under a tag derived from (base digest, lock hash) or in.Tag. When
// the target already has that tag for the same lock and base, it returns at
// once (CacheHit) with no download and no push.
func Bake(ctx context.Context, in BakeInput, opts ...Option) (*Result, error) {
	start := time.Now()
	o, err := makeOptions(opts...)
	if err != nil {
		return nil, err
	}
	defer o.removeTemp()
	ct := &countingTransport{base: o.roundTripper()}
	o.transport, o.rt = ct, nil
	bk, err := planBake(in, o)
	if err != nil {
		return nil, err
	}
	res, err := bk.run(ctx)
	if err != nil {
		return nil, err
	}
	res.Image = res.Ref
	res.Jars = jarURLs(res.JarsDir, res.Files)
	res.Requests = ct.requests.Load()
	res.BytesUploaded = ct.uploaded.Load()
	res.Duration = time.Since(start)
	return res, nil
}

// baking is one Bake: its inputs checked (planBake), then the numbered
// steps of run, each a method, filling res.
type baking struct {
	in                 BakeInput
	o                  *options
	lockHash           string
	jarsDir, sparkHome string
	pythonDir          string // "" for a lock without wheels
	baseRef, targetRef *ref
	tag                string // in.Tag or the target's; "" derives it from the key
	plats              []v1.Platform
	platNames          []string // sorted
	epoch              time.Time
	shared             []bool // per artifact: in the shared set
	sharedMissing      []string
	baseDesc           *v1.Descriptor
	key                string
	target             *ref // targetRef with its tag
	res                *Result
}

// planBake checks in and the options, and parses what Bake reads: nothing
// is fetched.
func planBake(in BakeInput, o *options) (*baking, error) {
	if in.Lock == nil {
		return nil, errdefs.Errorf(errdefs.BadArgument, "bake: no lock")
	}
	if o.compression == "" {
		o.compression = DefaultCompression
	}
	if err := checkCompression(o.compression); err != nil {
		return nil, err
	}
	// Jars and wheels have their places; any other kind is refused.
	if err := in.Lock.Placeable("bake image", in.Wheels != nil); err != nil {
		return nil, err
	}
	if in.Shared != nil {
		if err := in.Shared.JarsOnly("bake image (its shared set)"); err != nil {
			return nil, err
		}
	}
	bk := &baking{in: in, o: o, lockHash: in.Lock.Hash()}
	var err error
	if len(in.Lock.Wheels()) > 0 {
		if bk.pythonDir, err = cleanPythonDir(in.PythonDir); err != nil {
			return nil, err
		}
	}
	if bk.jarsDir, err = cleanJarsDir(in.JarsDir); err != nil {
		return nil, err
	}
	if bk.sparkHome, err = cleanSparkHome(in.SparkHome); err != nil {
		return nil, err
	}
	if bk.baseRef, err = parseRef(in.Base); err != nil {
		return nil, err
	}
	if bk.targetRef, err = parseRef(in.Target); err != nil {
		return nil, err
	}
	if bk.targetRef.isLayout() {
		o.scopeAuth(bk.baseRef)
	} else {
		o.scopeAuth(bk.targetRef)
	}
	if bk.tag, err = targetTag(in, bk.targetRef); err != nil {
		return nil, err
	}
	if bk.plats, bk.platNames, err = parsePlatforms(in.Platforms); err != nil {
		return nil, err
	}
	if bk.epoch, err = o.layerEpoch(); err != nil {
		return nil, err
	}
	return bk, nil
}

// targetTag is the tag asked for: in.Tag, or the one in.Target names (they
// must agree); "" when neither names one.
func targetTag(in BakeInput, targetRef *ref) (string, error) {
	tag := in.Tag
	if !hasExplicitTag(in.Target) {
		return tag, nil
	}
	t := targetRef.tag
	if !targetRef.isLayout() {
		t = targetRef.name.Identifier()
	}
	if targetRef.digest != "" || strings.HasPrefix(t, "sha256:") {
		return "", errdefs.Optionf(errdefs.BadArgument, "layers.BakeInput.Target", "target %s: name a repository or a tag, not a digest", in.Target)
	}
	if tag != "" && tag != t {
		return "", errdefs.Optionf(errdefs.BadArgument, "layers.BakeInput.Tag", "target %s has tag %q but the tag asked for is %q", in.Target, t, tag)
	}
	return t, nil
}

// parsePlatforms parses BakeInput.Platforms (comma-separated lists
// allowed); the names come back sorted.
func parsePlatforms(in []string) ([]v1.Platform, []string, error) {
	var plats []v1.Platform
	var names []string
	for _, s := range in {
		for _, s := range strings.Split(s, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			p, err := v1.ParsePlatform(s)
			if err != nil {
				return nil, nil, errdefs.Optionf(errdefs.BadArgument, "layers.BakeInput.Platforms", "platform %q: %w", s, err)
			}
			plats = append(plats, *p)
			names = append(names, p.String())
		}
	}
	slices.Sort(names)
	return plats, names, nil
}

// run is the bake's steps, in order; each fetches or builds no more than
// it needs, so a cache hit stops at step 2.
func (bk *baking) run(ctx context.Context) (*Result, error) {
	if err := bk.keyFromBase(ctx); err != nil { // 1
		return nil, err
	}
	if hit, err := bk.cacheHit(ctx); hit || err != nil { // 2
		return bk.res, err
	}
	paths, err := bk.jarPaths(ctx) // 3
	if err != nil {
		return nil, err
	}
	wheels, err := bk.wheelPaths(ctx)
	if err != nil {
		return nil, err
	}
	b, targets, err := bk.images(ctx) // 4
	if err != nil {
		return nil, err
	}
	skip, err := bk.classpathReport(ctx, targets[0]) // 5
	if err != nil {
		return nil, err
	}
	var py *builtJarLayer
	if len(wheels) > 0 { // 6a: the wheels' layer, first: a refused wheel stops the bake before any jar layer
		pl, err := buildPythonLayer(ctx, bk.in.Lock, wheels, bk.pythonDir, bk)
		if err != nil {
			return nil, err
		}
		py = &pl
	}
	built, withShared, err := bk.buildLayers(ctx, paths, skip, py) // 6
	if err != nil {
		return nil, err
	}
	out, anns, err := bk.appendAll(targets, built, withShared) // 7
	if err != nil {
		return nil, err
	}
	return bk.res, bk.write(ctx, b, out, anns) // 8
}

// keyFromBase is step 1: the base digest (one HEAD at most), and from it
// the bake key, the target tag and the result's frame.
func (bk *baking) keyFromBase(ctx context.Context) error {
	in, o := bk.in, bk.o
	bdesc, err := headDigest(ctx, bk.baseRef, o)
	if err != nil {
		return err
	}
	bk.baseDesc = bdesc
	baseDigest := bdesc.Digest.String()
	for _, f := range in.Extra {
		if f.ID == "" {
			return errdefs.Errorf(errdefs.Internal, "bake: extra file %s has no ID", f.Name)
		}
	}
	if bk.shared, bk.sharedMissing, err = sharedJars(in.Lock, in.Shared); err != nil {
		return err
	}
	var sharedKey []string
	if in.Shared != nil {
		sharedKey = []string{}
		for i, a := range in.Lock.Jars() {
			if bk.shared[i] {
				sharedKey = append(sharedKey, a.File+" "+a.Sha256)
			}
		}
	}
	bk.key = bakeKey(baseDigest, bk.lockHash, bk.jarsDir, bk.sparkHome, bk.platNames, in.SkipProvided, o.maxLayers, o.bigJar, o.compression, bk.epoch, in.Extra, sharedKey, bk.pythonDir)
	tag := bk.tag
	if tag == "" {
		tag = cacheTag(bk.key)
	}
	if bk.target, err = bk.targetRef.withTag(tag); err != nil {
		return err
	}
	bk.res = &Result{Tag: bk.target.String(), LockHash: bk.lockHash, BaseDigest: baseDigest, JarsDir: bk.jarsDir, Layers: []LayerInfo{}, Platforms: []string{}, Compression: o.compression, PythonDir: bk.pythonDir}
	return nil
}

// cacheHit is step 2: one GET of the target manifest. It reports a hit
// (the result filled from the image's annotations).
func (bk *baking) cacheHit(ctx context.Context) (bool, error) {
	tgt, res := bk.target, bk.res
	info, err := lookup(ctx, tgt, bk.o)
	if err != nil {
		return false, err
	}
	if info != nil && info.LockHash == bk.lockHash && info.BaseDigest == res.BaseDigest && info.JarsDir == bk.jarsDir && info.Key == bk.key {
		bk.o.logger.Printf("cache hit: %s already has %s", tgt, info.Digest)
		res.CacheHit = true
		res.Digest = info.Digest
		res.Ref = tgt.digestRef(info.digest)
		res.Files = info.Files
		res.Platforms = info.Platforms
		res.SparkVersion = info.SparkVersion
		res.Warnings = reclassify(info.Warnings, info.SparkVersion)
		return true, strict(bk.in, res.Warnings, "the image exists already (a cache hit)")
	}
	if info != nil {
		bk.o.logger.Printf("%s exists but holds another bake; replacing it", tgt)
	}
	return false, nil
}

// jarPaths is step 3: the local jars, one per artifact.
func (bk *baking) jarPaths(ctx context.Context) ([]string, error) {
	var paths []string
	if bk.in.Jars != nil {
		var err error
		if paths, err = bk.in.Jars(ctx); err != nil {
			return nil, err
		}
	}
	if len(paths) != len(bk.in.Lock.Jars()) {
		return nil, errdefs.Errorf(errdefs.Internal, "bake: %d paths for %d artifacts", len(paths), len(bk.in.Lock.Jars()))
	}
	return paths, nil
}

// images is step 4: the base (unchanged since step 1), and the images of
// it to extend.
func (bk *baking) images(ctx context.Context) (*base, []platformImage, error) {
	in := bk.in
	b, err := loadBase(ctx, bk.baseRef, bk.o)
	if err != nil {
		return nil, nil, err
	}
	if b.desc.Digest != bk.baseDesc.Digest {
		return nil, nil, errdefs.Errorf(errdefs.Unavailable, "base %s changed while baking (%s, then %s); rerun", in.Base, bk.baseDesc.Digest, b.desc.Digest)
	}
	targets, err := selectImages(b, bk.plats, in.Base)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLayerTypes(targets, bk.o.compression, in.Base); err != nil {
		return nil, nil, err
	}
	if in.ExtraPlatform != "" && len(in.Extra) > 0 {
		if err := checkExtraPlatform(targets, b, in.ExtraPlatform, in.Base); err != nil {
			return nil, nil, err
		}
	}
	return b, targets, nil
}

// classpathReport is step 5: the classpath conflict report (of the first
// platform; jars do not vary by platform). It returns the files to skip
// (SkipProvided).
func (bk *baking) classpathReport(ctx context.Context, first platformImage) (map[string]bool, error) {
	in, res := bk.in, bk.res
	sparkJars := path.Join(bk.sparkHome, "jars")
	bj, err := baseJars(ctx, first.img, []string{sparkJars, bk.jarsDir}, processIndex, bk.o.cacheDir)
	if err != nil {
		return nil, registryError(err, "reading base "+in.Base)
	}
	jars := in.Lock.Jars()
	coords := make([]string, len(jars))
	files := make([]string, len(jars))
	for i, a := range jars {
		coords[i], files[i] = a.Coord, a.File
	}
	report := conflictReport(coords, files, bj, sparkJars)
	if cf, err := first.img.ConfigFile(); err == nil && cf != nil {
		report.BaseJavaVersion = javaVersion(cf.Config.Env)
	}
	skip := map[string]bool{}
	if in.SkipProvided {
		for i, c := range report.Conflicts {
			if c.SameVersion {
				report.Conflicts[i].Skipped = true
				skip[c.File] = true
			}
		}
	}
	res.Report = report
	res.SparkVersion = report.BaseSparkVersion
	res.Warnings = report.Warnings
	return skip, strict(in, res.Warnings, "nothing was pushed")
}

// buildLayers is step 6: the layers, built once for every platform: the
// shared layer (a shared set), the Extra files' when there is a shared
// layer, the per-job layer(s), py (the wheels', built in step 6a) when
// not nil, the Extra files' otherwise. withShared
// reports a shared layer.
func (bk *baking) buildLayers(ctx context.Context, paths []string, skip map[string]bool, py *builtJarLayer) (built []builtJarLayer, withShared bool, err error) {
	in, o, res := bk.in, bk.o, bk.res
	var jars, sjars []bakeJar
	for i, a := range in.Lock.Jars() {
		if skip[a.File] {
			continue
		}
		j := bakeJar{file: a.File, path: paths[i], sha256: a.Sha256}
		if bk.shared[i] {
			sjars = append(sjars, j)
		} else {
			jars = append(jars, j)
		}
		res.Files = append(res.Files, a.File)
	}
	if res.Files == nil {
		res.Files = []string{}
	}
	if len(sjars) > 0 {
		sl, err := buildJarLayers(ctx, sjars, bk.jarsDir, bk.epoch, o, 1)
		if err != nil {
			return nil, false, err
		}
		sl[0].info.Role = RoleShared
		built = append(built, sl...)
	}
	if in.Shared != nil {
		res.SharedMissing = bk.sharedMissing
		o.logger.Printf("shared set: %d of its %d jars in the shared layer", len(sjars), len(in.Shared.Jars()))
		if len(bk.sharedMissing) > 0 {
			o.logger.Printf("the lock lacks %d jar(s) of the shared set (%s): this shared layer differs from that of a lock that has them all", len(bk.sharedMissing), strings.Join(bk.sharedMissing, ", "))
		}
	}
	var extra []builtJarLayer
	if len(in.Extra) > 0 {
		l, err := buildLayer(ctx, in.Extra, bk.epoch, o)
		if err != nil {
			return nil, false, err
		}
		names := make([]string, len(in.Extra))
		for i, f := range in.Extra {
			names[i] = f.Name
		}
		extra = []builtJarLayer{{layer: l, info: LayerInfo{Digest: l.digest.String(), DiffID: l.diffID.String(), Size: l.size, Files: names}}}
		if len(sjars) > 0 {
			extra[0].info.Role = RoleExtra
			built, extra = append(built, extra...), nil
		}
	}
	if len(jars) > 0 || len(sjars) == 0 {
		jl, err := buildJarLayers(ctx, jars, bk.jarsDir, bk.epoch, o, o.maxLayers)
		if err != nil {
			return nil, false, err
		}
		for i := range jl {
			if len(sjars) > 0 {
				jl[i].info.Role = RoleJob
			}
		}
		built = append(built, jl...)
	}
	if py != nil { // the wheels' layer, right above the jars'
		built = append(built, *py)
	}
	built = append(built, extra...)
	for _, bl := range built {
		res.Layers = append(res.Layers, bl.info)
		o.logger.Printf("layer %s: %d jars, %d bytes", bl.layer.digest, len(bl.info.Files), bl.layer.size)
	}
	return built, len(sjars) > 0, nil
}

// appendAll is step 7: the layers appended to every target image, with
// the bake's annotations (returned for the index).
func (bk *baking) appendAll(targets []platformImage, built []builtJarLayer, withShared bool) ([]platformImage, map[string]string, error) {
	in, res := bk.in, bk.res
	ja, _ := json.Marshal(JarsAnnotation{Dir: bk.jarsDir, Files: res.Files})
	anns := map[string]string{
		AnnotationLock:       bk.lockHash,
		AnnotationJars:       string(ja),
		AnnotationCoords:     coordsOf(in.Lock),
		AnnotationBaseDigest: res.BaseDigest,
		annotationKey:        bk.key,
	}
	if res.SparkVersion != "" {
		anns[AnnotationSparkVersion] = res.SparkVersion
	}
	if withShared {
		anns[AnnotationShared] = in.Shared.Hash()
	}
	if bk.pythonDir != "" {
		wheels := in.Lock.Wheels()
		files := make([]string, 0, len(wheels))
		for _, a := range wheels {
			files = append(files, a.File)
		}
		anns[AnnotationPython] = pythonAnnotation(bk.pythonDir, files)
	}
	verdict, _ := json.Marshal(res.Warnings)
	anns[AnnotationWarnings] = string(verdict)
	history := v1.History{Created: v1.Time{Time: bk.epoch}, CreatedBy: "prebake bake image", Comment: "prebake lock " + bk.lockHash}
	var out []platformImage
	for _, t := range targets {
		img, err := appendLayers(t.img, built, history, anns)
		if err == nil && bk.pythonDir != "" {
			img, err = WithPythonPath(img, bk.pythonDir)
		}
		if err != nil {
			return nil, nil, errdefs.New(errdefs.Internal, fmt.Errorf("appending layers to %s: %w", in.Base, err))
		}
		out = append(out, platformImage{desc: t.desc, img: img})
		if t.desc.Platform != nil {
			res.Platforms = append(res.Platforms, t.desc.Platform.String())
		}
	}
	return out, anns, nil
}

// write is step 8: the image (one platform of a single-image base, or one
// asked for) or an index of them, written to the target.
func (bk *baking) write(ctx context.Context, b *base, out []platformImage, anns map[string]string) error {
	var w writable
	if len(out) == 1 && (b.img != nil || len(bk.plats) == 1) {
		w = writable{img: out[0].img}
	} else {
		idx, err := buildIndex(b, out, anns)
		if err != nil {
			return errdefs.New(errdefs.Internal, fmt.Errorf("building index for %s: %w", bk.in.Base, err))
		}
		w = writable{idx: idx}
	}
	d, err := w.digest()
	if err != nil {
		return errdefs.New(errdefs.Internal, err)
	}
	bk.o.logger.Printf("writing %s (%s)", bk.target, d)
	if err := write(ctx, bk.target, w, bk.o); err != nil {
		return err
	}
	bk.res.Digest = d.String()
	bk.res.Ref = bk.target.digestRef(d)
	return nil
}

// strict is the error of a strict bake with warnings (what: the state the
// bake stopped in), else nil.
func strict(in BakeInput, ws []Warning, what string) error {
	if !in.Strict {
		return nil
	}
	return StrictError("base "+in.Base, StrictWarnings(ws, in.StrictKinds), what)
}

// StrictError is the ErrStrict error (kind Invalid) for the warnings ws of
// a check against where (a base image, a Spark directory), what saying
// what was left undone; nil when ws is empty.
func StrictError(where string, ws []Warning, what string) error {
	if len(ws) == 0 {
		return nil
	}
	msgs := make([]string, len(ws))
	for i, w := range ws {
		msgs[i] = w.Message + " (" + w.Kind + ")"
	}
	return errdefs.New(errdefs.Invalid, fmt.Errorf("%w: %s: %s; %s", ErrStrict, where, strings.Join(msgs, "; "), what))
}

// cleanSparkHome is the base's Spark directory: "" is /opt/spark.
func cleanSparkHome(d string) (string, error) {
	if d == "" {
		return path.Dir(SparkJarsDir), nil
	}
	if !path.IsAbs(d) {
		return "", errdefs.Optionf(errdefs.BadArgument, "layers.BakeInput.SparkHome", "Spark home %q: must be an absolute path in the image", d)
	}
	return path.Clean(d), nil
}

// annotationKey records the bake key, so a cache hit also matches the
// layering, platforms and options.
const annotationKey = "dev.prebake.key"

type platformImage struct {
	desc v1.Descriptor
	img  v1.Image
}

// selectImages picks the images of b to extend.
func selectImages(b *base, want []v1.Platform, name string) ([]platformImage, error) {
	matches := func(p *v1.Platform) bool {
		if len(want) == 0 {
			return true
		}
		if p == nil {
			return false
		}
		for _, w := range want {
			if p.Satisfies(w) {
				return true
			}
		}
		return false
	}
	if b.img != nil {
		d := b.desc
		if cf, err := b.img.ConfigFile(); err == nil {
			d.Platform = cf.Platform()
		} else {
			return nil, registryError(err, "reading base config "+name)
		}
		if d.Platform != nil && d.Platform.OS == "" {
			d.Platform = nil
		}
		if !matches(d.Platform) {
			return nil, errdefs.Errorf(errdefs.NotFound, "base %s is %v, not %v", name, d.Platform, want)
		}
		d.Platform = nil // a single image keeps no platform in a descriptor
		return []platformImage{{desc: d, img: b.img}}, nil
	}
	im, err := b.idx.IndexManifest()
	if err != nil {
		return nil, registryError(err, "reading base index "+name)
	}
	var out []platformImage
	for _, d := range im.Manifests {
		if isIndex(d.MediaType) || (d.Platform != nil && d.Platform.OS == "unknown") {
			continue // nested indexes and attestations
		}
		if !matches(d.Platform) {
			continue
		}
		img, err := b.idx.Image(d.Digest)
		if err != nil {
			return nil, registryError(err, "reading base image "+name+"@"+d.Digest.String())
		}
		out = append(out, platformImage{desc: d, img: img})
	}
	if len(out) == 0 {
		return nil, errdefs.Errorf(errdefs.NotFound, "base %s has no image for platform %v", name, want)
	}
	return out, nil
}

// checkLayerTypes refuses a compression the images' manifests have no
// layer media type for (zstd on a Docker schema 2 base) before any layer
// is built.
func checkLayerTypes(targets []platformImage, comp Compression, name string) error {
	for _, t := range targets {
		mt, err := t.img.MediaType()
		if err != nil {
			return registryError(err, "reading base manifest "+name)
		}
		if _, err := comp.mediaType(mt == types.DockerManifestSchema2); err != nil {
			return err
		}
	}
	return nil
}

// checkExtraPlatform refuses to add platform-specific files (the prebake
// binary) to an image of another platform.
func checkExtraPlatform(targets []platformImage, b *base, want, name string) error {
	wp, err := v1.ParsePlatform(want)
	if err != nil {
		return errdefs.Errorf(errdefs.BadArgument, "extra files platform %q: %w", want, err)
	}
	for _, t := range targets {
		p := t.desc.Platform
		if p == nil && b.img != nil {
			if cf, err := t.img.ConfigFile(); err == nil {
				p = cf.Platform()
			}
		}
		if p == nil || p.OS != wp.OS || p.Architecture != wp.Architecture {
			return errdefs.Optionf(errdefs.BadArgument, "layers.BakeInput.Platforms", "base %s is %v but the added files are for %s only: restrict the platforms to %s", name, p, want, want)
		}
	}
	return nil
}

// Layer roles (LayerInfo.Role) of a bake with a shared set.
const (
	RoleShared = "shared" // the jars of the shared set
	RoleJob    = "job"    // the lock's other jars
	RoleExtra  = "extra"  // BakeInput.Extra (the prebake binary)
)

// sharedJars marks the artifacts of l that the shared set s has (same file
// name and sha256), and lists the files of s that l lacks (or has with
// another sha256), in s's order. A nil s marks none.
func sharedJars(l, s *lock.File) (in []bool, missing []string, err error) {
	ljars := l.Jars()
	in = make([]bool, len(ljars))
	if s == nil {
		return in, nil, nil
	}
	sjars := s.Jars()
	want := make(map[string]string, len(sjars))
	for _, a := range sjars {
		if err := lock.CheckArtifact(a); err != nil {
			return nil, nil, errdefs.New(errdefs.Invalid, fmt.Errorf("shared set: %w", err))
		}
		want[a.File] = a.Sha256
	}
	have := map[string]bool{}
	for i, a := range ljars {
		if sum, ok := want[a.File]; ok && sum == a.Sha256 {
			in[i], have[a.File] = true, true
		}
	}
	for _, a := range sjars {
		if !have[a.File] {
			missing = append(missing, a.File)
		}
	}
	return in, missing, nil
}

type bakeJar struct {
	file, path, sha256 string
}

type builtJarLayer struct {
	layer *builtLayer
	info  LayerInfo
}

// assignLayers splits jars (in lock order) into at most k groups with an
// assignment that depends only on each jar's name and size: up to k/4 jars of
// at least big bytes get a layer of their own (largest first), and the rest
// go to k-k/4 buckets by a hash of the file name. The bucket count never
// changes, so adding a package changes only the buckets its jars fall into
// (about 1/(k-k/4) of the set).
func assignLayers(names []string, sizes []int64, k int, big int64) [][]int {
	if k <= 1 || len(names) <= 1 {
		all := make([]int, len(names))
		for i := range all {
			all[i] = i
		}
		return [][]int{all}
	}
	maxBig := k / 4
	var bigs []int
	for i, s := range sizes {
		if s >= big {
			bigs = append(bigs, i)
		}
	}
	slices.SortStableFunc(bigs, func(a, b int) int {
		if sizes[a] != sizes[b] {
			if sizes[a] > sizes[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(names[a], names[b])
	})
	if len(bigs) > maxBig {
		bigs = bigs[:maxBig]
	}
	isBig := map[int]bool{}
	for _, i := range bigs {
		isBig[i] = true
	}
	var groups [][]int
	for i := range names { // big layers in lock order
		if isBig[i] {
			groups = append(groups, []int{i})
		}
	}
	nb := k - maxBig
	buckets := make([][]int, nb)
	for i, n := range names {
		if isBig[i] {
			continue
		}
		h := sha256.Sum256([]byte(n))
		b := int(binary.BigEndian.Uint32(h[:4]) % uint32(nb))
		buckets[b] = append(buckets[b], i)
	}
	for _, b := range buckets {
		if len(b) > 0 {
			groups = append(groups, b)
		}
	}
	return groups
}

// buildJarLayers builds the layers of jars, split into at most k.
func buildJarLayers(ctx context.Context, jars []bakeJar, dir string, epoch time.Time, o *options, k int) ([]builtJarLayer, error) {
	names := make([]string, len(jars))
	sizes := make([]int64, len(jars))
	files := make([]File, len(jars))
	for i, j := range jars {
		// Defence in depth: the entry stays in the jars directory whatever
		// the name (the lock's names are checked in Bake).
		if err := safepath.Name(j.file); err != nil {
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("layer entry for %s: %w", j.path, err))
		}
		name, err := safepath.JoinSlash(dir, j.file)
		if err != nil {
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("layer entry for %s: %w", j.path, err))
		}
		f, err := FileFromPath(name, j.path, 0o644, j.sha256)
		if err != nil {
			return nil, err
		}
		f.Open = jarOpen(o.jarOpener, f.Open, j, f.Size)
		files[i], names[i], sizes[i] = f, j.file, f.Size
	}
	var out []builtJarLayer
	for _, g := range assignLayers(names, sizes, k, o.bigJar) {
		var fs []File
		var ns []string
		for _, i := range g {
			fs = append(fs, files[i])
			ns = append(ns, names[i])
		}
		l, err := buildLayerWithDir(ctx, fs, dir, epoch, o)
		if err != nil {
			return nil, err
		}
		if ns == nil {
			ns = []string{}
		}
		out = append(out, builtJarLayer{layer: l, info: LayerInfo{Digest: l.digest.String(), DiffID: l.diffID.String(), Size: l.size, Files: ns}})
	}
	return out, nil
}

// buildLayerWithDir builds a layer of files; an empty set still gets the
// jars directory (with an empty .keep file), so the image says where the (no)
// jars are.
func buildLayerWithDir(ctx context.Context, files []File, dir string, epoch time.Time, o *options) (*builtLayer, error) {
	if len(files) == 0 {
		files = []File{{Name: path.Join(dir, ".keep"), Mode: 0o644, Size: 0, ID: "empty", Open: emptyOpen}}
	}
	return buildLayer(ctx, files, epoch, o)
}

func appendLayers(img v1.Image, built []builtJarLayer, h v1.History, anns map[string]string) (v1.Image, error) {
	mt, err := img.MediaType()
	if err != nil {
		return nil, err
	}
	adds := make([]mutate.Addendum, len(built))
	for i, b := range built {
		l := *b.layer
		lmt, err := l.comp.mediaType(mt == types.DockerManifestSchema2)
		if err != nil {
			return nil, err
		}
		l.mt = lmt
		adds[i] = mutate.Addendum{Layer: &l, History: h, MediaType: lmt, Annotations: layerAnnotations(&l)}
	}
	out, err := mutate.Append(img, adds...)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(out, anns).(v1.Image), nil
}

func buildIndex(b *base, imgs []platformImage, anns map[string]string) (v1.ImageIndex, error) {
	mt := types.OCIImageIndex
	all := map[string]string{}
	if b.idx != nil {
		m, err := b.idx.MediaType()
		if err != nil {
			return nil, err
		}
		mt = m
		if im, err := b.idx.IndexManifest(); err == nil {
			for k, v := range im.Annotations {
				all[k] = v
			}
		}
	}
	for k, v := range anns {
		all[k] = v
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, mt), indexAddenda(imgs)...)
	return mutate.Annotations(idx, all).(v1.ImageIndex), nil
}

// verifiedOpen hashes a jar's bytes as the layer reads them: a jar whose
// content is not the lock's (a cache blob modified after it was checked)
// fails the bake (errdefs.Invalid) instead of going into the image.
func verifiedOpen(open func() (io.ReadCloser, error), j bakeJar) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		return &verifyingReader{rc: rc, h: sha256.New(), j: j}, nil
	}
}

// jarOpen opens a jar through the JarOpener when it takes it (a cache blob
// it vouches for: read once, not hashed again), else through verifiedOpen.
func jarOpen(jo JarOpener, open func() (io.ReadCloser, error), j bakeJar, size int64) func() (io.ReadCloser, error) {
	if jo == nil {
		return verifiedOpen(open, j)
	}
	return func() (io.ReadCloser, error) {
		rc, ok, err := jo(j.path, j.sha256, size)
		if err != nil {
			return nil, fmt.Errorf("jar %s: %w", j.file, err)
		}
		if !ok {
			return verifiedOpen(open, j)()
		}
		return rc, nil
	}
}

type verifyingReader struct {
	rc io.ReadCloser
	h  hash.Hash
	j  bakeJar
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.rc.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.j.sha256 {
			return n, errdefs.New(errdefs.Invalid, fmt.Errorf("jar %s at %s: %w: sha256 %s, the lock says %s", v.j.file, v.j.path, lock.ErrCorruptBlob, got, v.j.sha256))
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.rc.Close() }
