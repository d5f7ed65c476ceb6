package repo

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/maven"
)

// M2POMOnlyError is an artifact not found in the user's local Maven
// repository (local-m2-cache) although its POM is there: Maven fetched
// only the POM (a parent, a BOM, a dependency of scope import). Ivy, and so
// Spark, takes the module from the first repository that has its POM and
// fails the same way ("FAILED DOWNLOADS"); prebake keeps that parity and
// says what to do. It matches ErrNotFound (the exit code stays "not found").
type M2POMOnlyError struct {
	Module string // g:a:v
	File   string // the artifact's file name not found (slf4j-api-1.7.36.jar)
	Dir    string // the module's directory in the local Maven repository
	Err    error  // the not-found error
}

func (e *M2POMOnlyError) Error() string {
	return fmt.Sprintf("artifact %s: %v; the local Maven repository (%s) holds this module's POM but not %s, "+
		"as after a Maven build that fetched only the POM; Spark takes the module from there too and fails the same way (FAILED DOWNLOADS): "+
		"remove %s and run again", e.Module, e.Err, RepoLocalM2, e.File, e.Dir)
}

func (e *M2POMOnlyError) Unwrap() error { return e.Err }

// m2POMOnly wraps err (an artifact of ref not found in the local Maven
// repository r) as an M2POMOnlyError when the module's POM is there.
func m2POMOnly(r *entry, ref ArtifactRef, err error) error {
	dir := filepath.Join(r.dir, filepath.FromSlash(ModulePath(ref.Group, ref.Artifact, ref.Version)))
	if _, serr := os.Stat(filepath.Join(dir, ArtifactFileName(ref.Artifact, ref.Version, "", "pom"))); serr != nil {
		return nil
	}
	return errdefs.New(errdefs.NotFound, &M2POMOnlyError{
		Module: ref.Group + ":" + ref.Artifact + ":" + ref.Version,
		File:   ArtifactFileName(ref.Artifact, ref.Version, ref.Classifier, ref.Ext),
		Dir:    dir,
		Err:    err,
	})
}

// M2Entry is a module directory of a local Maven repository that holds a
// POM and no jar.
type M2Entry struct {
	Module string `json:"module"` // g:a:v
	Dir    string `json:"dir"`
}

// DefaultM2ScanLimit bounds the directories FindM2POMOnly visits.
const DefaultM2ScanLimit = 200000

// FindM2POMOnly lists the module directories under the local Maven
// repository root (home/.m2/repository) that hold a POM and no jar,
// visiting at most limit directories (truncated is then true). Modules
// whose POM says <packaging>pom</packaging> (parents, BOMs) have no jar by
// design and are not listed. A missing root is no entry.
func FindM2POMOnly(ctx context.Context, root string, limit int) (entries []M2Entry, truncated bool, err error) {
	if limit <= 0 {
		limit = DefaultM2ScanLimit
	}
	visited := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return fs.SkipAll
			}
			return nil // an unreadable directory is not a POM-only module
		}
		if !d.IsDir() {
			return nil
		}
		if visited++; visited > limit {
			truncated = true
			return fs.SkipAll
		}
		if visited%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." {
			return nil
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) < 3 {
			return nil
		}
		version, artifact := parts[len(parts)-1], parts[len(parts)-2]
		group := strings.Join(parts[:len(parts)-2], ".")
		pom := filepath.Join(p, ArtifactFileName(artifact, version, "", "pom"))
		data, perr := readHead(pom, 1<<20)
		if perr != nil {
			return nil
		}
		if _, jerr := os.Stat(filepath.Join(p, ArtifactFileName(artifact, version, "", "jar"))); jerr == nil {
			return fs.SkipDir
		}
		if h, herr := maven.Peek(data); herr != nil || (h.Packaging != "" && !jarPackagings[strings.ToLower(h.Packaging)]) {
			return fs.SkipDir // not a POM, or a module without a jar by design
		}
		entries = append(entries, M2Entry{Module: group + ":" + artifact + ":" + version, Dir: p})
		return fs.SkipDir
	})
	if err != nil && ctx.Err() != nil {
		return nil, false, errdefs.New(errdefs.Timeout, fmt.Errorf("scanning %s: %w", root, err))
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Dir < entries[j].Dir })
	return entries, truncated, nil
}

// readHead reads at most n bytes of a regular file.
func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, fs.ErrInvalid
	}
	buf := make([]byte, min(n, st.Size()))
	k, err := f.Read(buf)
	if err != nil && k == 0 {
		return nil, err
	}
	return buf[:k], nil
}

// jarPackagings are Ivy's packagings (and types) whose artifact is a .jar.
var jarPackagings = map[string]bool{"jar": true, "ejb": true, "bundle": true, "maven-plugin": true, "eclipse-plugin": true,
	"jbi-component": true, "jbi-shared-library": true, "orbit": true, "hk2-jar": true}

// JarPackaging reports whether a POM packaging (or a dependency type) is
// one whose artifact is a .jar, as Ivy reads it.
func JarPackaging(t string) bool { return jarPackagings[t] }
