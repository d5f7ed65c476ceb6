package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prebake/prebake/lock"

	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
)

// prebakeRun resolves the case with prebake's default chain, as
// `prebake resolve` does on a machine whose ~/.m2 is empty (home) and whose
// DEFAULT_ARTIFACT_REPOSITORY is central: the same chain Spark gets. It
// returns the locked jars (names and sha256) and the lock itself.
func prebakeRun(ctx context.Context, c kase, central, testdata, home, cache string, opts ...resolver.Option) (outcome, *lock.File, error) {
	req := c.request(central, testdata, cache)
	req.Home, req.DefaultArtifactRepository = home, central
	res, err := resolver.Resolve(ctx, req, opts...)
	if err != nil {
		var nf bool
		if errors.Is(err, resolver.ErrNotFound) {
			nf = true
		}
		return outcome{failed: true, detail: fmt.Sprintf("%v (not found: %v)", err, nf)}, nil, nil
	}
	o := outcome{jars: map[string]string{}}
	for _, a := range res.Lock.Artifacts {
		o.jars[a.File] = a.Sha256
	}
	return o, res.Lock, nil
}

// countingTransport counts the requests that reach the network.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}

// recorder wraps the live Source of a resolution and writes what the graph
// read from Central into the mirror directory (packed as
// testdata/central/mirror.tar.gz):
// every POM, every version list (as a maven-metadata.xml) and, as empty
// placeholders, the jars whose existence the graph checked. Replaying the
// suite hermetically reads the mirror over file:// instead of Central.
type recorder struct {
	src     resolver.Source
	central string // the Central URL: what comes from elsewhere is not recorded
	mirror  string
	mu      sync.Mutex
	err     error
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

func (r *recorder) write(rel string, data []byte) {
	p := filepath.Join(r.mirror, filepath.FromSlash(rel))
	if !strings.HasPrefix(p, r.mirror+string(filepath.Separator)) {
		r.fail(fmt.Errorf("mirror path %q escapes %s", rel, r.mirror))
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.fail(err)
		return
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		r.fail(err)
	}
}

func modDir(g, a, v string) string { return strings.ReplaceAll(g, ".", "/") + "/" + a + "/" + v + "/" }

func (r *recorder) pom(pf *resolver.POMFile, g, a, v string) {
	if pf.Repo.URL == r.central {
		r.write(modDir(g, a, v)+a+"-"+v+".pom", pf.Data)
	}
}

func (r *recorder) POM(ctx context.Context, g, a, v string) (*resolver.POMFile, error) {
	pf, err := r.src.POM(ctx, g, a, v)
	if err == nil {
		r.pom(pf, g, a, v)
	}
	return pf, err
}

func (r *recorder) Artifact(ctx context.Context, ref resolver.ArtifactRef) (*resolver.CachedFile, error) {
	f, err := r.src.Artifact(ctx, ref)
	if err == nil && ref.Repo.URL == r.central {
		ext := ref.Ext
		if ext == "" {
			ext = "jar"
		}
		name := ref.Artifact + "-" + ref.Version
		if ref.Classifier != "" {
			name += "-" + ref.Classifier
		}
		r.write(modDir(ref.Group, ref.Artifact, ref.Version)+name+"."+ext, nil)
	}
	return f, err
}

func (r *recorder) metadata(g, a string, versions []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- recorded by hack/central: the versions Central listed -->\n<metadata>\n  <groupId>%s</groupId>\n  <artifactId>%s</artifactId>\n  <versioning>\n    <versions>\n", g, a)
	for _, v := range versions {
		fmt.Fprintf(&b, "      <version>%s</version>\n", v)
	}
	b.WriteString("    </versions>\n  </versioning>\n</metadata>\n")
	r.write(strings.ReplaceAll(g, ".", "/")+"/"+a+"/maven-metadata.xml", []byte(b.String()))
}

func (r *recorder) Versions(ctx context.Context, g, a string) ([]string, error) {
	vs, err := r.src.Versions(ctx, g, a)
	if err == nil {
		r.metadata(g, a, vs)
	}
	return vs, err
}

type repoVersioner interface {
	Repositories() []resolver.Repository
	VersionsIn(ctx context.Context, r resolver.Repository, g, a string) ([]string, error)
	POMIn(ctx context.Context, r resolver.Repository, g, a, v string) (*resolver.POMFile, error)
}

func (r *recorder) Repositories() []resolver.Repository {
	return r.src.(repoVersioner).Repositories()
}

func (r *recorder) VersionsIn(ctx context.Context, repo resolver.Repository, g, a string) ([]string, error) {
	vs, err := r.src.(repoVersioner).VersionsIn(ctx, repo, g, a)
	if err == nil && repo.URL == r.central {
		r.metadata(g, a, vs)
	}
	return vs, err
}

func (r *recorder) POMIn(ctx context.Context, repo resolver.Repository, g, a, v string) (*resolver.POMFile, error) {
	pf, err := r.src.(repoVersioner).POMIn(ctx, repo, g, a, v)
	if err == nil {
		r.pom(pf, g, a, v)
	}
	return pf, err
}

// record builds the case's graph from Central through a recorder, writing
// what it read into mirror.
func record(ctx context.Context, c kase, central, testdata, home, cache, mirror string) error {
	req := c.request(central, testdata, cache)
	req.Home, req.DefaultArtifactRepository = home, central
	src, err := resolver.NewSource(ctx, req)
	if err != nil {
		return err
	}
	rec := &recorder{src: src, central: central, mirror: mirror}
	_, gerr := resolver.BuildGraph(ctx, req, rec, nil)
	if rec.err != nil {
		return rec.err
	}
	if gerr != nil && !errors.Is(gerr, resolver.ErrNotFound) {
		return gerr
	}
	return nil
}

// replay resolves the case's graph from the recorded mirror alone (over
// file://, no network): Central and spark-packages both point at the
// mirror, as DEFAULT_ARTIFACT_REPOSITORY makes them point at Central. It
// returns the jar names (without sha256: the mirror holds no jar bytes).
func replay(ctx context.Context, c kase, mirror, testdata, home, cache string) (outcome, error) {
	u := "file://" + filepath.ToSlash(mirror) + "/"
	req := c.request(u, testdata, cache)
	req.ChecksumPolicy = resolver.ChecksumIgnore
	req.Offline = false
	req.Home, req.DefaultArtifactRepository = home, u
	src, err := resolver.NewSource(ctx, req, resolver.WithRetry(1, time.Millisecond))
	if err != nil {
		return outcome{}, err
	}
	g, err := resolver.BuildGraph(ctx, req, src, nil)
	if err != nil {
		return outcome{failed: true, detail: err.Error()}, nil
	}
	o := outcome{jars: map[string]string{}}
	for _, a := range g.Artifacts {
		o.jars[repo.SparkFileName(a.Group, a.Artifact, a.Version, a.Classifier, a.Ext)] = ""
	}
	return o, nil
}
