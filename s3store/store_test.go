package s3store_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"
	"github.com/johannesboyne/gofakes3"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/s3store/s3test"
)

// countingTransport counts request body bytes that leave the client.
type countingTransport struct {
	base  http.RoundTripper
	bytes atomic.Int64
	reqs  atomic.Int64
}

// localJars is lock.LocalJars, for tests whose lock variable hides the
// package.
var localJars = lock.LocalJars

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.reqs.Add(1)
	if r.Body != nil && r.ContentLength > 0 {
		c.bytes.Add(r.ContentLength)
	}
	return c.base.RoundTrip(r)
}

func fakeS3(t *testing.T, bucket string) (string, *countingTransport) {
	t.Helper()
	return s3test.InProcess(t, bucket), &countingTransport{base: http.DefaultTransport}
}

func TestBakeFakeS3(t *testing.T) {
	endpoint, ct := fakeS3(t, "jars")
	lf, paths := s3test.Fixture(t, t.TempDir(), 11, s3test.Jar{Name: "a", Size: 70 << 10}, s3test.Jar{Name: "b", Size: 5 << 10})
	ctx := context.Background()
	st, err := s3store.Open(ctx, "s3://jars/p", s3store.WithEndpoint(endpoint), s3store.WithPathStyle(true),
		s3store.WithStaticCredentials("k", "s"), s3store.WithHTTPClient(&http.Client{Transport: ct}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Bake(ctx, lf, lock.LocalJars(paths))
	if err != nil {
		t.Fatal(err)
	}
	if res.Uploaded != 2 || res.Hit {
		t.Fatalf("first bake: %+v", res)
	}
	ct.bytes.Store(0)
	ct.reqs.Store(0)
	res, err = st.Bake(ctx, lf, lock.LocalJars(paths))
	if err != nil || !res.Hit {
		t.Fatalf("second bake: %+v, %v", res, err)
	}
	// One GET of the manifest and one empty PUT of today's use marker
	// (used/<lock-hash>/<day>, read by gc --older-than).
	if ct.reqs.Load() != 2 || ct.bytes.Load() != 0 {
		t.Errorf("hit: %d requests, %d body bytes; want 2 and 0", ct.reqs.Load(), ct.bytes.Load())
	}
	urls, err := st.URLs(ctx, res.Manifest, s3store.StyleS3A)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"s3a://jars/p/jars/sha256/" + lf.Artifacts[0].Sha256 + "/" + lf.Artifacts[0].File,
		"s3a://jars/p/jars/sha256/" + lf.Artifacts[1].Sha256 + "/" + lf.Artifacts[1].File}
	if d := cmp.Diff(want, urls); d != "" {
		t.Errorf("URLs (-want +got):\n%s", d)
	}
}

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	lf, paths := s3test.Fixture(t, t.TempDir(), 12, s3test.Jar{Name: "a", Size: 10 << 10}, s3test.Jar{Name: "b", Size: 3 << 10})
	ctx := context.Background()
	st, err := s3store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Bake(ctx, lf, lock.LocalJars(paths))
	if err != nil || res.Uploaded != 2 {
		t.Fatalf("bake: %+v, %v", res, err)
	}
	// Layout.
	for _, a := range lf.Artifacts {
		if _, err := os.Stat(filepath.Join(dir, "jars", "sha256", a.Sha256, a.File)); err != nil {
			t.Error(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "sets", lf.Hash()+".json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := s3store.ParseManifest("m", data)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(s3store.NewManifest(lf), m); d != "" {
		t.Errorf("manifest (-want +got):\n%s", d)
	}
	// No temp files left.
	matches, _ := filepath.Glob(filepath.Join(dir, "*", ".*tmp*"))
	if len(matches) != 0 {
		t.Errorf("temp files left: %v", matches)
	}
	// Repair with Verify.
	if err := os.Remove(filepath.Join(dir, "jars", "sha256", lf.Artifacts[0].Sha256, lf.Artifacts[0].File)); err != nil {
		t.Fatal(err)
	}
	res, err = st.Bake(ctx, lf, lock.LocalJars(paths), s3store.WithVerify(true))
	if err != nil || !res.Hit || res.Repaired != 1 {
		t.Fatalf("verify: %+v, %v", res, err)
	}
	urls, err := s3store.SetURLs(ctx, "file://"+dir, lf.Hash(), s3store.StyleS3A)
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + filepath.ToSlash(dir) + "/jars/sha256/" + lf.Artifacts[0].Sha256 + "/" + lf.Artifacts[0].File; urls[0] != want {
		t.Errorf("url %s, want %s", urls[0], want)
	}
	_, err = s3store.SetURLs(ctx, "file://"+dir, strings.Repeat("a", 64), s3store.StyleS3A)
	var missing *s3store.SetMissingError
	if errdefs.KindOf(err) != errdefs.NotFound || !errors.As(err, &missing) || missing.Hash != strings.Repeat("a", 64) || !errors.Is(err, s3store.ErrNotFound) {
		t.Errorf("missing set: %v", err)
	}
}

func TestBakeRejectsCorruptLocalJar(t *testing.T) {
	dir := t.TempDir()
	lf, paths := s3test.Fixture(t, t.TempDir(), 13, s3test.Jar{Name: "a", Size: 1 << 10})
	if err := os.WriteFile(paths[0], []byte("not the jar"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := s3store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Bake(context.Background(), lf, lock.LocalJars(paths))
	if errdefs.KindOf(err) != errdefs.Invalid {
		t.Fatalf("corrupt jar: %v (kind %v), want invalid input", err, errdefs.KindOf(err))
	}
	if _, err := os.Stat(filepath.Join(dir, "jars")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a corrupt jar reached the store")
	}
}

func TestFileStoreUnwritable(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	lf, paths := s3test.Fixture(t, t.TempDir(), 14, s3test.Jar{Name: "a", Size: 1 << 10})
	st, err := s3store.Open(context.Background(), "file://"+file+"/store")
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Bake(context.Background(), lf, lock.LocalJars(paths))
	if errdefs.KindOf(err) != errdefs.CantWrite {
		t.Fatalf("unwritable store: %v (kind %v), want cannot write", err, errdefs.KindOf(err))
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"s3://", "no bucket"},
		{"s3://user:secret@bucket/p", "must not carry credentials"},
		{"gs://bucket/p", "must be s3://"},
		{"file://host/dir", "absolute path"},
	} {
		_, err := s3store.Open(context.Background(), tc.url)
		if err == nil || errdefs.KindOf(err) != errdefs.BadArgument || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) = %v, want a usage error containing %q", tc.url, err, tc.want)
		}
	}
}

func TestParseManifestErrors(t *testing.T) {
	lf := &lock.File{Artifacts: []lock.Artifact{{Coord: "g:a:1", File: "g_a-1.jar", Sha256: strings.Repeat("1", 64), Size: 3}}}
	good, _ := s3store.NewManifest(lf).Marshal()
	for _, tc := range []struct{ name, data string }{
		{"not json", "{"},
		{"version", strings.Replace(string(good), `"version": 1`, `"version": 9`, 1)},
		{"hash", strings.Replace(string(good), lf.Hash(), strings.Repeat("f", 64), 1)},
		{"path", strings.Replace(string(good), `"path": "jars/`, `"path": "x/`, 1)},
	} {
		if _, err := s3store.ParseManifest(tc.name, []byte(tc.data)); errdefs.KindOf(err) != errdefs.Invalid {
			t.Errorf("%s: %v, want invalid input", tc.name, err)
		}
	}
	if _, err := s3store.ParseManifest("good", good); err != nil {
		t.Errorf("good manifest: %v", err)
	}
}

func TestGCFileStore(t *testing.T) {
	dir := t.TempDir()
	fix := t.TempDir()
	lockA, pathsA := s3test.Fixture(t, fix, 31, s3test.Jar{Name: "shared", Size: 4 << 10}, s3test.Jar{Name: "a", Size: 2 << 10})
	lockB, pathsB := s3test.Fixture(t, fix, 31, s3test.Jar{Name: "shared", Size: 4 << 10}, s3test.Jar{Name: "b", Size: 1 << 10})
	ctx := context.Background()
	st, err := s3store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		l *lock.File
		p []string
	}{{lockA, pathsA}, {lockB, pathsB}} {
		if _, err := st.Bake(ctx, x.l, lock.LocalJars(x.p)); err != nil {
			t.Fatal(err)
		}
	}
	keepA := func(h string, _ time.Time) bool { return h == lockA.Hash() }
	// Young jars are protected by the grace period.
	res, err := st.GC(ctx, keepA, s3store.WithGrace(time.Hour), s3store.WithDryRun(true))
	if err != nil || res.YoungSkipped != 1 || len(res.DeletedJars) != 0 {
		t.Fatalf("gc with grace: %+v, %v", res, err)
	}
	res, err = st.GC(ctx, keepA)
	if err != nil {
		t.Fatal(err)
	}
	var bJar string
	for _, a := range lockB.Artifacts {
		if strings.Contains(a.File, "_b-") {
			bJar = s3store.JarPath(a.Sha256, a.File)
		}
	}
	if d := cmp.Diff([]string{bJar}, res.DeletedJars); d != "" || len(res.DeletedSets) != 1 || res.DeletedSets[0] != lockB.Hash() {
		t.Errorf("gc: %+v (-want +got jars):\n%s", res, d)
	}
	if _, err := st.Manifest(ctx, lockA.Hash()); err != nil {
		t.Errorf("kept set gone: %v", err)
	}
	m, _ := st.Manifest(ctx, lockA.Hash())
	if missing, err := st.Missing(ctx, m); err != nil || len(missing) != 0 {
		t.Errorf("kept set lost jars: %v %v", missing, err)
	}
}

func TestOpenSchemes(t *testing.T) {
	st, err := s3store.Open(context.Background(), "s3a://bucket/p", s3store.WithRegion("us-east-1"))
	if err != nil || st.URL() != "s3://bucket/p/" {
		t.Errorf("s3a://: %v %q", err, st.URL())
	}
	for _, bad := range []string{"bucket/prefix", "bucket", "./dir", "gs://b/p"} {
		if _, err := s3store.Open(context.Background(), bad); errdefs.KindOf(err) != errdefs.BadArgument {
			t.Errorf("Open(%q): %v, want a usage error", bad, err)
		}
	}
}

// A bake killed mid-upload leaves a multipart upload that is no object
// (audit 4, L6): gc lists it, and aborts it once older than the grace;
// a young one (a bake in progress) and one outside jars/ stay.
func TestGCAbortsStaleMultipartUploads(t *testing.T) {
	ctx := context.Background()
	clock := gofakes3.FixedTimeSource(time.Now().Add(-3 * time.Hour))
	endpoint := s3test.InProcessClock(t, clock, "jars")
	st, err := s3store.Open(ctx, "s3://jars/p", s3store.WithEndpoint(endpoint), s3store.WithPathStyle(true),
		s3store.WithStaticCredentials("k", "s"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint); o.UsePathStyle = true })
	start := func(key string) {
		t.Helper()
		out, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("jars"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("jars"), Key: aws.String(key), UploadId: out.UploadId,
			PartNumber: aws.Int32(1), Body: strings.NewReader("part one of a killed upload")}); err != nil {
			t.Fatal(err)
		}
	}
	start("p/jars/ab/killed.jar")    // three hours old
	start("other/jars/ab/other.jar") // another tool's, outside the store
	clock.Advance(3 * time.Hour)
	start("p/jars/cd/running.jar") // now: a bake in progress
	keep := func(string, time.Time) bool { return true }

	for _, dry := range []bool{true, false} {
		res, err := st.GC(ctx, keep, s3store.WithGrace(time.Hour), s3store.WithDryRun(dry))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"jars/ab/killed.jar"}, res.AbortedUploads); diff != "" {
			t.Errorf("dry run %v: aborted uploads (-want +got):\n%s", dry, diff)
		}
	}
	list, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("jars")})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, u := range list.Uploads {
		left = append(left, aws.ToString(u.Key))
	}
	sort.Strings(left)
	if diff := cmp.Diff([]string{"other/jars/ab/other.jar", "p/jars/cd/running.jar"}, left); diff != "" {
		t.Errorf("uploads left (-want +got):\n%s", diff)
	}
	res, err := st.GC(ctx, keep, s3store.WithGrace(time.Hour))
	if err != nil || len(res.AbortedUploads) != 0 {
		t.Errorf("second gc: %+v %v", res.AbortedUploads, err)
	}
}
