package resolver

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prebake/prebake/resolver/repo"

	"github.com/prebake/prebake/errdefs"

	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/maven"
)

// memSource is a Source over an in-memory repository of fuzzed POMs:
// ev:root:1 is root, every other module asked for gets one of others
// (by a hash of its coordinate) until maxModules distinct modules have
// been served, then none (so a POM that names ever new modules still
// gives a finite graph). Versions come from metadata's <version>s, checked
// as the real source checks them. It records every coordinate it is asked
// for.
type memSource struct {
	root     []byte
	others   [][]byte
	versions []string
	badMeta  error

	mu     sync.Mutex
	served map[string]bool
	asked  []string
}

const maxModules = 40

var _ Source = (*memSource)(nil)

func (s *memSource) ask(kind string, parts ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, kind+"\x00"+strings.Join(parts, "\x00"))
}

func (s *memSource) POM(_ context.Context, g, a, v string) (*POMFile, error) {
	s.ask("pom", g, a, v)
	key := g + ":" + a + ":" + v
	data := s.root
	if key != "ev:root:1" {
		h := fnv.New32a()
		h.Write([]byte(key))
		if len(s.others) == 0 {
			return nil, fmt.Errorf("module %s: %w", key, ErrNotFound)
		}
		data = s.others[int(h.Sum32()%uint32(len(s.others)))]
	}
	s.mu.Lock()
	if !s.served[key] && len(s.served) >= maxModules {
		s.mu.Unlock()
		return nil, fmt.Errorf("module %s: %w", key, ErrNotFound)
	}
	s.served[key] = true
	s.mu.Unlock()
	return &POMFile{Data: data, Repo: Repository{Name: "mem", URL: "mem:/"}, URL: "mem:/" + key}, nil
}

func (s *memSource) Artifact(_ context.Context, ref ArtifactRef) (*CachedFile, error) {
	s.ask("artifact", ref.Group, ref.Artifact, ref.Version, ref.Classifier, ref.Ext)
	return &CachedFile{Path: "/dev/null", URL: "mem:/jar"}, nil
}

func (s *memSource) Versions(_ context.Context, g, a string) ([]string, error) {
	s.ask("versions", g, a)
	if s.badMeta != nil {
		return nil, errdefs.New(errdefs.Invalid, s.badMeta)
	}
	if len(s.versions) == 0 {
		return nil, fmt.Errorf("versions of %s:%s: %w", g, a, ErrNotFound)
	}
	return s.versions, nil
}

func newMemSource(root []byte, others [][]byte, metadata string) *memSource {
	s := &memSource{root: root, others: others, served: map[string]bool{}}
	for _, v := range strings.Split(metadata, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if err := maven.CheckPart(maven.FieldVersion, v); err != nil {
			s.badMeta = err
		}
		s.versions = append(s.versions, v)
	}
	return s
}

// FuzzGraph resolves ev:root:1 over a repository of fuzzed POMs. The
// invariants: no panic; the walk ends within seconds (the repository is
// finite, expansions are bounded); the graph never asks the repository
// for a coordinate maven.CheckPart refuses nor a path that leaves the
// repository's root; every jar it picks has a name that stays in the
// retrieve directory (or the lock writer refuses it); errors carry a
// documented exit code.
func FuzzGraph(f *testing.F) {
	p := func(body string) []byte {
		return []byte("<project><groupId>ev</groupId><artifactId>${a}</artifactId><version>1</version>" + body + "</project>")
	}
	dep := func(g, a, v, extra string) string {
		return "<dependencies><dependency><groupId>" + g + "</groupId><artifactId>" + a + "</artifactId><version>" + v + "</version>" + extra + "</dependency></dependencies>"
	}
	f.Add(p(dep("ev", "b", "1", "")), p(dep("ev", "c", "[1,2)", "")), p(""), "1,1.5,2")
	f.Add(p(dep("../../x", "b", "1", "")), p(""), p(""), "")
	f.Add(p(dep("ev", "b", "1", "<classifier>../x</classifier>")), p(""), p(""), "")
	f.Add(p("<parent><groupId>ev</groupId><artifactId>p</artifactId><version>1</version></parent>"), p(dep("${project.groupId}", "${project.artifactId}-x", "1", "")), p(""), "")
	f.Add(p(dep("ev", "b", "latest.release", "")), p(""), p(""), "1,../../x")
	f.Add(p(`<properties><p0>xxxxxxxxxx</p0><p1>${p0}${p0}${p0}${p0}${p0}${p0}${p0}${p0}${p0}${p0}</p1><p2>${p1}${p1}${p1}${p1}${p1}${p1}${p1}${p1}${p1}${p1}</p2><p3>${p2}${p2}${p2}${p2}${p2}${p2}${p2}${p2}${p2}${p2}</p3><p4>${p3}${p3}${p3}${p3}${p3}${p3}${p3}${p3}${p3}${p3}</p4><p5>${p4}${p4}${p4}${p4}${p4}${p4}${p4}${p4}${p4}${p4}</p5></properties>`+dep("ev", "b", "${p5}", "")), p(""), p(""), "")
	f.Add(p("<dependencyManagement><dependencies><dependency><groupId>ev</groupId><artifactId>bom</artifactId><version>1</version><type>pom</type><scope>import</scope></dependency></dependencies></dependencyManagement>"+dep("ev", "b", "", "")),
		p("<distributionManagement><relocation><artifactId>moved</artifactId></relocation></distributionManagement>"), p(""), "")
	f.Fuzz(func(t *testing.T, root, b, c []byte, metadata string) {
		src := newMemSource(root, [][]byte{b, c}, metadata)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		g, err := BuildGraph(ctx, Request{Packages: []string{"ev:root:1"}}, src, nil)
		if d := time.Since(start); d > 4*time.Second {
			t.Fatalf("resolution took %v", d)
		}
		for _, a := range src.asked {
			parts := strings.Split(a, "\x00")
			kind, parts := parts[0], parts[1:]
			if err := maven.CheckParts(parts...); err != nil {
				t.Fatalf("the repository was asked for %s %q: %v", kind, parts, err)
			}
			if kind == "versions" {
				continue
			}
			cls, ext := "", "pom"
			if kind == "artifact" {
				cls, ext = parts[3], parts[4]
			}
			rel := repo.ModulePath(parts[0], parts[1], parts[2]) + repo.ArtifactFileName(parts[1], parts[2], cls, ext)
			if _, err := safepath.Join("/repo", rel); err != nil {
				t.Fatalf("%s %q: the path %q leaves the repository: %v", kind, parts, rel, err)
			}
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("no result in 5 s: %v", err)
			}
			switch code := errdefs.KindOf(err); code {
			case errdefs.Invalid, errdefs.NotFound:
			default:
				t.Fatalf("exit code %d: %v", code, err)
			}
			return
		}
		for _, ref := range g.Artifacts {
			name := repo.SparkFileName(ref.Group, ref.Artifact, ref.Version, ref.Classifier, "jar")
			if safepath.Name(name) != nil {
				continue // downloadAll refuses it (65)
			}
			if p := filepath.Join("/cache/retrieve/h", name); !safepath.Within("/cache/retrieve/h", p) || filepath.Dir(p) != "/cache/retrieve/h" {
				t.Fatalf("jar %q lands at %s", name, p)
			}
		}
	})
}
