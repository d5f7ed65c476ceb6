package layers

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/lock"
)

// A team's platform set and two jobs' extra packages, with their jars'
// sizes on Maven Central (rounded): the platform is Delta Lake, S3A and a
// JDBC driver; job A reads Kafka, job B Avro and XML.
var (
	platformArtifacts = []testArtifact{
		{"io.delta:delta-spark_2.12:3.2.0", 6_310_000},
		{"io.delta:delta-storage:3.2.0", 24_000},
		{"org.antlr:antlr4-runtime:4.9.3", 337_000},
		{"org.apache.hadoop:hadoop-aws:3.3.4", 962_000},
		{"org.wildfly.openssl:wildfly-openssl:1.0.7.Final", 218_000},
		{"org.postgresql:postgresql:42.7.3", 1_087_000},
	}
	jobAArtifacts = []testArtifact{
		{"org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.0", 432_000},
		{"org.apache.spark:spark-token-provider-kafka-0-10_2.12:3.5.0", 56_000},
		{"org.apache.kafka:kafka-clients:3.4.1", 4_990_000},
		{"org.apache.commons:commons-pool2:2.11.1", 145_000},
	}
	jobBArtifacts = []testArtifact{
		{"org.apache.spark:spark-avro_2.12:3.5.0", 197_000},
		{"org.tukaani:xz:1.9", 116_000},
		{"com.databricks:spark-xml_2.12:0.18.0", 170_000},
		{"org.glassfish.jaxb:txw2:3.0.2", 72_000},
		{"org.apache.ws.xmlschema:xmlschema-core:2.3.1", 201_000},
	}
)

func concatArtifacts(sets ...[]testArtifact) []testArtifact {
	var out []testArtifact
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}

// imageFiles reads every regular file the layers above the base's n add:
// path -> sha256 (the merged view: an upper layer wins).
func imageFiles(t *testing.T, ref string, n int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range addedLayers(t, ref, n) {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag != tar.TypeReg {
				continue
			}
			s := sha256.New()
			if _, err := io.Copy(s, tr); err != nil {
				t.Fatal(err)
			}
			out[h.Name] = hex.EncodeToString(s.Sum(nil))
		}
		rc.Close()
	}
	return out
}

func roles(r *Result) []string {
	var out []string
	for _, l := range r.Layers {
		out = append(out, l.Role)
	}
	return out
}

// TestBakeSharedLayer: with a shared set, two job locks that both hold it
// get the same shared layer (digest and bytes) below their own per-job
// layer; each image has exactly the files, paths and spark.jars of the
// single-layer bake of its lock; the bake is reproducible and a cache hit
// the second time, under another tag than the single-layer bake's.
func TestBakeSharedLayer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	platform, _ := makeLock(t, t.TempDir(), platformArtifacts...)
	lockA, pathsA := makeLock(t, dir, concatArtifacts(platformArtifacts, jobAArtifacts)...)
	lockB, pathsB := makeLock(t, dir, concatArtifacts(jobBArtifacts, platformArtifacts)...)
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	nBase := len(addedLayers(t, base, 0))
	bake := func(l *lock.File, paths []string, shared *lock.File, opts ...Option) *Result {
		t.Helper()
		r, err := Bake(ctx, BakeInput{Lock: l, Jars: lock.LocalJars(paths), Base: base, Target: "oci:" + filepath.Join(t.TempDir(), "out"), Shared: shared}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		validateImage(t, r.Ref)
		return r
	}
	a, b := bake(lockA, pathsA, platform), bake(lockB, pathsB, platform)
	if diff := cmp.Diff([]string{RoleShared, RoleJob}, roles(a)); diff != "" {
		t.Fatalf("layer roles (-want +got):\n%s", diff)
	}
	if a.Layers[0].Digest != b.Layers[0].Digest || a.Layers[0].DiffID != b.Layers[0].DiffID {
		t.Errorf("shared layers differ: %s and %s", a.Layers[0].Digest, b.Layers[0].Digest)
	}
	if a.Layers[1].Digest == b.Layers[1].Digest {
		t.Errorf("per-job layers are the same")
	}
	var wantShared []string
	for _, x := range platform.Artifacts {
		wantShared = append(wantShared, x.File)
	}
	if diff := cmp.Diff(wantShared, a.Layers[0].Files); diff != "" {
		t.Errorf("shared layer files (-want +got):\n%s", diff)
	}
	if len(a.SharedMissing) != 0 || len(a.Layers[1].Files) != len(jobAArtifacts) {
		t.Errorf("missing %v, per-job files %v", a.SharedMissing, a.Layers[1].Files)
	}
	for _, tc := range []struct {
		name   string
		shared *Result
		l      *lock.File
		paths  []string
	}{{"A", a, lockA, pathsA}, {"B", b, lockB, pathsB}} {
		single := bake(tc.l, tc.paths, nil)
		if len(single.Layers) != 1 || single.Layers[0].Role != "" || single.Tag == tc.shared.Tag {
			t.Errorf("%s: single-layer bake %+v (tag %s)", tc.name, single.Layers, single.Tag)
		}
		if diff := cmp.Diff(single.Files, tc.shared.Files); diff != "" {
			t.Errorf("%s: files (-single +shared):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(single.Jars, tc.shared.Jars); diff != "" {
			t.Errorf("%s: spark.jars (-single +shared):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(imageFiles(t, single.Ref, nBase), imageFiles(t, tc.shared.Ref, nBase)); diff != "" {
			t.Errorf("%s: image files (-single +shared):\n%s", tc.name, diff)
		}
	}

	// Reproducible, and a cache hit in the same target.
	target := "oci:" + filepath.Join(t.TempDir(), "out")
	in := BakeInput{Lock: lockA, Jars: lock.LocalJars(pathsA), Base: base, Target: target, Shared: platform}
	r1, err := Bake(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Digest != a.Digest {
		t.Errorf("digest %s, then %s", a.Digest, r1.Digest)
	}
	in.Jars = noFetch(t)
	if hit, err := Bake(ctx, in); err != nil || !hit.CacheHit || hit.Digest != a.Digest {
		t.Errorf("second bake: %+v, %v; want a cache hit of %s", hit, err, a.Digest)
	}
	info, err := Inspect(ctx, r1.Tag)
	if err != nil {
		t.Fatal(err)
	}
	if info.Annotations[AnnotationShared] != platform.Hash() {
		t.Errorf("%s = %q, want the shared set's hash %s", AnnotationShared, info.Annotations[AnnotationShared], platform.Hash())
	}
}

// The edges of a shared set: a lock without some of its jars (listed in
// SharedMissing; its shared layer is another), one with another version's
// bytes under the same name (in the per-job layer), a lock that is all
// shared (no per-job layer), none shared (no shared layer), --layers and
// the Extra files (shared, extra, job layers: the two that jobs share at
// the bottom).
func TestBakeSharedEdges(t *testing.T) {
	ctx := context.Background()
	base := "oci:" + baseImageDir + ":" + baseImageAmd64Tag
	platform, _ := makeLock(t, t.TempDir(), platformArtifacts...)
	bake := func(arts []testArtifact, opts []Option, extra []File) *Result {
		t.Helper()
		l, paths := makeLock(t, t.TempDir(), arts...)
		r, err := Bake(ctx, BakeInput{Lock: l, Jars: lock.LocalJars(paths), Base: base, Target: "oci:" + filepath.Join(t.TempDir(), "out"), Shared: platform, Extra: extra}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		validateImage(t, r.Ref)
		return r
	}
	full := bake(concatArtifacts(platformArtifacts, jobAArtifacts), nil, nil)

	partial := bake(concatArtifacts(platformArtifacts[1:], jobAArtifacts), nil, nil)
	if diff := cmp.Diff([]string{fileName(platformArtifacts[0].coord)}, partial.SharedMissing); diff != "" {
		t.Errorf("SharedMissing (-want +got):\n%s", diff)
	}
	if partial.Layers[0].Digest == full.Layers[0].Digest {
		t.Error("a shared layer without one of the set's jars has the full set's digest")
	}

	other := append([]testArtifact{{platformArtifacts[3].coord, 1000}}, platformArtifacts[:3]...)
	other = append(other, platformArtifacts[4:]...)
	changed := bake(other, nil, nil)
	name := fileName(platformArtifacts[3].coord)
	if diff := cmp.Diff([]string{name}, changed.SharedMissing); diff != "" {
		t.Errorf("other bytes: SharedMissing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{name}, changed.Layers[1].Files); diff != "" {
		t.Errorf("other bytes: per-job layer files (-want +got):\n%s", diff)
	}

	all := bake(platformArtifacts, nil, nil)
	if diff := cmp.Diff([]string{RoleShared}, roles(all)); diff != "" || all.Layers[0].Digest != full.Layers[0].Digest {
		t.Errorf("all shared: roles %v (-want +got %s), digest %s want %s", roles(all), diff, all.Layers[0].Digest, full.Layers[0].Digest)
	}

	none := bake(jobBArtifacts, nil, nil)
	if diff := cmp.Diff([]string{""}, roles(none)); diff != "" || len(none.SharedMissing) != len(platformArtifacts) {
		t.Errorf("none shared: roles (-want +got):\n%s; missing %v", diff, none.SharedMissing)
	}

	extra := []File{bytesFile("/usr/local/bin/tool", 0o755, []byte("#!/bin/sh\n"))}
	extra[0].ID = "tool-1"
	split := bake(concatArtifacts(platformArtifacts, jobAArtifacts, jobBArtifacts), []Option{WithLayers(4)}, extra)
	got := roles(split)
	if len(got) < 4 || got[0] != RoleShared || got[1] != RoleExtra || got[2] != RoleJob || got[len(got)-1] != RoleJob {
		t.Errorf("--layers 4 with extra files: roles %v, want shared, extra, job...", got)
	}
	if split.Layers[0].Digest != full.Layers[0].Digest {
		t.Errorf("--layers 4: shared layer %s, want %s (the shared layer is never split)", split.Layers[0].Digest, full.Layers[0].Digest)
	}
	if !strings.HasPrefix(split.Layers[1].Files[0], "/usr/local/bin/") {
		t.Errorf("extra layer files %v", split.Layers[1].Files)
	}
}
