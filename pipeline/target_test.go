package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// fakeTarget is a JarTarget that records its calls: Place gives a URL per
// jar under its prefix; as a SetFinder (finder true) it holds the sets
// whose hash is in held.
type fakeTarget struct {
	prefix string
	held   map[string]bool
	placed []string // the lock hashes Place got
	found  []string // the lock hashes Find gave
	// spark, warning and late are what Place adds.
	spark         string
	warning, late string
}

func (f *fakeTarget) urls(lf *lock.File) []string {
	var urls []string
	for _, a := range lf.Artifacts {
		urls = append(urls, f.prefix+a.File)
	}
	return urls
}

func (f *fakeTarget) Place(ctx context.Context, _ *submit.Submission, in PlaceInput) (*Placed, error) {
	paths, err := in.Jars(ctx)
	if err != nil {
		return nil, err
	}
	if len(paths) != len(in.Lock.Artifacts) {
		return nil, errors.New("fake: the local jars do not match the lock")
	}
	f.placed = append(f.placed, in.Lock.Hash())
	p := &Placed{Cluster: f.urls(in.Lock), From: "fake " + f.prefix, SparkVersion: f.spark}
	if f.warning != "" {
		p.Warnings = []rewrite.Warning{{Kind: rewrite.WarnClasspath, Text: f.warning}}
	}
	if f.late != "" {
		p.Late = []rewrite.Warning{{Kind: rewrite.WarnOther, Text: f.late}}
	}
	return p, nil
}

// finderTarget is fakeTarget with Find (a store, say).
type finderTarget struct{ *fakeTarget }

func (f finderTarget) Find(_ context.Context, lf *lock.File) (*Placed, error) {
	if !f.held[lf.Hash()] {
		return nil, notHeld{errdefs.Errorf(errdefs.NotFound, "fake: no set %s", lf.Hash())}
	}
	f.found = append(f.found, lf.Hash())
	return &Placed{Cluster: f.urls(lf), From: "fake " + f.prefix}, nil
}

// TestPrepareTargets: what Prepare does with each kind of target, from its
// result and the target's calls: no target gives local paths; a target
// gets the resolved set once and its URLs, warnings and Spark version reach
// the rewrite; a SetFinder holding the lock's set is used without
// resolving (store-first, cluster mode with a lock), one that does not
// hold it gets the set placed; a file:// StoreTarget uploads the set.
func TestPrepareTargets(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	repoDir := filepath.Join(wd, "..", "testdata", "demo-repo")
	t.Setenv("SPARK_CONF_DIR", t.TempDir())
	const pkg = "org.slf4j:slf4j-api:1.7.36"
	// The lock of pkg, for the store-first cases.
	lockDir := t.TempDir()
	lockPath := filepath.Join(lockDir, "prebake.lock")
	base := resolver.Request{NoDefaultRepositories: true, Repositories: []string{"file://" + repoDir + "/"}}
	lreq := base
	lreq.Packages, lreq.LockPath, lreq.CacheDir = []string{pkg}, lockPath, t.TempDir()
	res, err := resolver.Resolve(context.Background(), lreq)
	if err != nil {
		t.Fatal(err)
	}
	hash, file := res.Lock.Hash(), res.Lock.Artifacts[0].File
	storeDir := t.TempDir()

	type outcome struct {
		JarsFrom, LockHash  string
		Jars                string // spark.jars
		Warnings            []string
		Spark               string
		Placed, Found       []string
		ResolvedOrRetrieved bool
	}
	for _, tc := range []struct {
		name   string
		deploy string
		lock   bool // Request.LockPath set
		target func() (JarTarget, *fakeTarget)
		want   outcome
	}{
		{"no target: client mode", "client", false, func() (JarTarget, *fakeTarget) { return nil, nil },
			outcome{JarsFrom: "local", LockHash: hash, Jars: "<cache>/" + file, ResolvedOrRetrieved: true}},
		{"a target places the set", "cluster", false, func() (JarTarget, *fakeTarget) {
			f := &fakeTarget{prefix: "fake://x/", spark: "3.5.1", warning: "base: mismatch", late: "late note"}
			return f, f
		}, outcome{JarsFrom: "fake fake://x/", LockHash: hash, Jars: "fake://x/" + file, Warnings: []string{"base: mismatch", "late note"},
			Spark: "3.5.1", Placed: []string{hash}, ResolvedOrRetrieved: true}},
		{"store-first: the finder holds the set", "cluster", true, func() (JarTarget, *fakeTarget) {
			f := &fakeTarget{prefix: "fake://held/", held: map[string]bool{hash: true}}
			return finderTarget{f}, f
		}, outcome{JarsFrom: "fake fake://held/", LockHash: hash, Jars: "fake://held/" + file, Found: []string{hash}}},
		{"store-first: not held yet so placed", "cluster", true, func() (JarTarget, *fakeTarget) {
			f := &fakeTarget{prefix: "fake://new/"}
			return finderTarget{f}, f
		}, outcome{JarsFrom: "fake fake://new/", LockHash: hash, Jars: "fake://new/" + file, Placed: []string{hash}, ResolvedOrRetrieved: true}},
		{"store-first needs a lock", "cluster", false, func() (JarTarget, *fakeTarget) {
			f := &fakeTarget{prefix: "fake://held/", held: map[string]bool{hash: true}}
			return finderTarget{f}, f
		}, outcome{JarsFrom: "fake fake://held/", LockHash: hash, Jars: "fake://held/" + file, Placed: []string{hash}, ResolvedOrRetrieved: true}},
		{"file:// store bake", "cluster", false, func() (JarTarget, *fakeTarget) {
			return &StoreTarget{URL: "file://" + storeDir, URLStyle: s3store.StyleS3A}, nil
		}, outcome{JarsFrom: "store file://" + storeDir, LockHash: hash, Jars: "file://" + storeDir + "/jars/sha256/<sum>/" + file, Warnings: []string{"k8s cluster mode: the jars are file: URL"}, ResolvedOrRetrieved: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			req := base
			req.CacheDir = cache
			if tc.lock {
				req.LockPath = lockPath
			}
			target, fake := tc.target()
			sub, err := submit.LoadSubmission([]string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", tc.deploy,
				"--packages", pkg, "--class", "Main", "local:///opt/app.jar"}, os.Environ())
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			rep, err := progress.New(&out, progress.Normal)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Prepare(context.Background(), sub, Options{Request: req, CacheDir: cache, Target: target, Reporter: rep})
			if err != nil {
				t.Fatal(err)
			}
			got := outcome{JarsFrom: r.JarsFrom, LockHash: r.LockHash, Spark: r.DriverSparkVersion}
			for _, w := range r.Warnings {
				got.Warnings = append(got.Warnings, w.Text[:min(len(w.Text), 40)])
			}
			for i, a := range r.Args {
				if a == "--jars" && i+1 < len(r.Args) {
					got.Jars = r.Args[i+1]
				}
			}
			got.Jars = strings.ReplaceAll(got.Jars, filepath.Join(cache, "retrieve", hash), "<cache>")
			if j, ok := strings.CutPrefix(got.Jars, "file://"+storeDir+"/jars/sha256/"); ok {
				if _, f, ok := strings.Cut(j, "/"); ok {
					got.Jars = "file://" + storeDir + "/jars/sha256/<sum>/" + f
				}
			}
			if fake != nil {
				got.Placed, got.Found = fake.placed, fake.found
			}
			entries, _ := os.ReadDir(cache)
			got.ResolvedOrRetrieved = len(entries) > 0
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nreport:\n%s\nargs: %q", diff, out.String(), r.Args)
			}
		})
	}
}

// TestImageTargetNeedsABase: an image target with no base image in the
// submission is a BadArgument naming ErrNoBaseImage, before anything is
// baked.
func TestImageTargetNeedsABase(t *testing.T) {
	sub, err := submit.LoadSubmission([]string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster", "local:///opt/app.jar"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&ImageTarget{Repo: "oci:" + t.TempDir()}).Place(context.Background(), sub, PlaceInput{Lock: &lock.File{}})
	if !errors.Is(err, ErrNoBaseImage) || errdefs.KindOf(err) != errdefs.BadArgument {
		t.Errorf("Place with no base image = %v (kind %v), want ErrNoBaseImage, BadArgument", err, errdefs.KindOf(err))
	}
}

// TestS3AConf: the conf that makes an S3-compatible store's s3a:// URLs
// readable, and only those.
func TestS3AConf(t *testing.T) {
	for _, tc := range []struct {
		store, endpoint string
		pathStyle       bool
		style           s3store.URLStyle
		want            map[string]string
	}{
		{"s3://b/p", "http://127.0.0.1:7070", true, s3store.StyleS3A, map[string]string{"spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:7070", "spark.hadoop.fs.s3a.path.style.access": "true"}},
		{"s3a://b/p", "", true, s3store.StyleS3A, map[string]string{"spark.hadoop.fs.s3a.path.style.access": "true"}},
		{"s3://b/p", "", false, s3store.StyleS3A, nil},
		{"s3://b/p", "http://e", true, s3store.StylePresigned, nil},
		{"file:///s", "http://e", true, s3store.StyleS3A, nil},
	} {
		if diff := cmp.Diff(tc.want, S3AConf(tc.store, tc.endpoint, tc.pathStyle, tc.style)); diff != "" {
			t.Errorf("S3AConf(%q, %q, %v, %s) (-want +got):\n%s", tc.store, tc.endpoint, tc.pathStyle, tc.style, diff)
		}
	}
}

// TestNoFinderGivesLocalPaths: FindJars without a finder gives the local
// paths only, and nothing for a command line without packages.
func TestNoFinderGivesLocalPaths(t *testing.T) {
	j, err := FindJars(context.Background(), resolver.Request{}, submit.Packages{}, nil, nil)
	if j != nil || err != nil {
		t.Errorf("FindJars of no packages = %v, %v; want nothing", j, err)
	}
}
