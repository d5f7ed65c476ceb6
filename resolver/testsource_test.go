package resolver

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// fsSource is a test-only Source over file:// Maven-layout directories,
// tried in order.
type fsSource struct{ repos []Repository }

func newFSSource(urls []string) (*fsSource, error) {
	s := &fsSource{}
	for i, u := range urls {
		if _, err := url.Parse(u); err != nil {
			return nil, err
		}
		s.repos = append(s.repos, Repository{Name: fmt.Sprintf("repo-%d", i+1), URL: u})
	}
	return s, nil
}

func (s *fsSource) Repositories() []Repository { return s.repos }

func repoDir(r Repository) string { return strings.TrimPrefix(r.URL, "file://") }

func (s *fsSource) POM(ctx context.Context, g, a, v string) (*POMFile, error) {
	var tried []string
	for _, r := range s.repos {
		for _, name := range fsFileNames(r, g, a, v, "", "pom") {
			rel := modulePath(g, a, v) + name
			data, err := os.ReadFile(filepath.Join(repoDir(r), rel))
			if err == nil {
				return &POMFile{Data: data, Repo: r, URL: r.URL + rel}, nil
			}
		}
		tried = append(tried, r.Name)
	}
	return nil, fmt.Errorf("module %s:%s:%s not found in %s: %w", g, a, v, strings.Join(tried, ", "), ErrNotFound)
}

func (s *fsSource) Artifact(ctx context.Context, ref ArtifactRef) (*CachedFile, error) {
	var rel string
	for _, name := range fsFileNames(ref.Repo, ref.Group, ref.Artifact, ref.Version, ref.Classifier, ref.Ext) {
		rel = modulePath(ref.Group, ref.Artifact, ref.Version) + name
		p := filepath.Join(repoDir(ref.Repo), rel)
		if st, err := os.Stat(p); err == nil {
			return &CachedFile{Path: p, Size: st.Size(), URL: ref.Repo.URL + rel}, nil
		}
	}
	return nil, fmt.Errorf("artifact %s: %w", ref.Repo.URL+rel, ErrNotFound)
}

// fsFileNames: a SNAPSHOT's timestamped name first (snapshot.go).
func fsFileNames(r Repository, g, a, v, cls, ext string) []string {
	return snapshotFileNames(a, v, cls, ext, func() ([]byte, error) {
		return os.ReadFile(filepath.Join(repoDir(r), modulePath(g, a, v), "maven-metadata.xml"))
	})
}

// Versions lists maven-metadata.xml's <versions>, else the version
// directories, of each repository in order, without duplicates.
func (s *fsSource) Versions(ctx context.Context, g, a string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, r := range s.repos {
		vs, err := s.VersionsIn(ctx, r, g, a)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		for _, v := range vs {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("versions of %s:%s: %w", g, a, ErrNotFound)
	}
	return out, nil
}

// VersionsIn implements repoVersioner: r's maven-metadata.xml <versions>,
// else its version directories.
func (s *fsSource) VersionsIn(ctx context.Context, r Repository, g, a string) ([]string, error) {
	dir := filepath.Join(repoDir(r), strings.ReplaceAll(g, ".", "/"), a)
	var vs []string
	if data, err := os.ReadFile(filepath.Join(dir, "maven-metadata.xml")); err == nil {
		var m metadata
		if err := xml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		vs = m.Versions
	} else if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				vs = append(vs, e.Name())
			}
		}
	}
	var out []string
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("versions of %s:%s in %s: %w", g, a, r.Name, ErrNotFound)
	}
	return out, nil
}

// POMIn implements repoVersioner: the POM from r alone.
func (s *fsSource) POMIn(ctx context.Context, r Repository, g, a, v string) (*POMFile, error) {
	for _, name := range fsFileNames(r, g, a, v, "", "pom") {
		rel := modulePath(g, a, v) + name
		if data, err := os.ReadFile(filepath.Join(repoDir(r), rel)); err == nil {
			return &POMFile{Data: data, Repo: r, URL: r.URL + rel}, nil
		}
	}
	return nil, fmt.Errorf("module %s:%s:%s not found in %s: %w", g, a, v, r.Name, ErrNotFound)
}
