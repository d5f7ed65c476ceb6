package repo

// Timestamped SNAPSHOT versions, as Ivy 2.5.1's IBiblioResolver finds them
// (findTimestampedSnapshotVersion): a revision ending in SNAPSHOT is looked
// up in <version>/maven-metadata.xml; when it names a snapshot timestamp,
// the files are <artifact>-<base>-<timestamp>-<buildNumber>[-<classifier>].<ext>
// and are tried before the plain -SNAPSHOT names. The module keeps its
// -SNAPSHOT revision: Spark retrieves it as <g>_<a>-<v>-SNAPSHOT.jar.

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/prebake/prebake/resolver/cache"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/safepath"
	"github.com/prebake/prebake/maven"
)

type snapshotMetadata struct {
	Timestamp   string `xml:"versioning>snapshot>timestamp"`
	BuildNumber string `xml:"versioning>snapshot>buildNumber"`
}

// TimestampedVersion is the unique version a version directory's
// maven-metadata.xml gives a SNAPSHOT version ("2.0.2-SNAPSHOT" →
// "2.0.2-20070310.181613-3"); ok is false when version is no SNAPSHOT or
// the metadata names no timestamp, or one that maven.CheckPart refuses.
func TimestampedVersion(version string, metadata []byte) (string, bool) {
	if !strings.HasSuffix(version, "SNAPSHOT") {
		return "", false
	}
	var m snapshotMetadata
	d := xml.NewDecoder(bytes.NewReader(metadata))
	d.Strict = false
	if err := d.Decode(&m); err != nil {
		return "", false
	}
	ts := strings.TrimSpace(m.Timestamp)
	if ts == "" {
		return "", false
	}
	tv := strings.TrimSuffix(version, "SNAPSHOT") + ts + "-" + strings.TrimSpace(m.BuildNumber)
	if maven.CheckPart(maven.FieldVersion, tv) != nil {
		// A timestamp no file name can hold: treated as no timestamp
		// (the plain -SNAPSHOT name), as unreadable metadata is.
		return "", false
	}
	return tv, true
}

// snapshotFileNames are the names to try for an artifact file of a module
// version, in order: the timestamped name (when readMeta returns the
// version directory's maven-metadata.xml and it names a timestamp), then
// the plain one.
func snapshotFileNames(artifact, version, classifier, ext string, readMeta func() ([]byte, error)) []string {
	plain := ArtifactFileName(artifact, version, classifier, ext)
	if !strings.HasSuffix(version, "SNAPSHOT") {
		return []string{plain}
	}
	data, err := readMeta()
	if err != nil {
		return []string{plain}
	}
	if tv, ok := TimestampedVersion(version, data); ok {
		return []string{ArtifactFileName(artifact, tv, classifier, ext), plain}
	}
	return []string{plain}
}

// fileNames is snapshotFileNames for repository r of the source.
func (s *Source) fileNames(ctx context.Context, a asker, r *entry, group, artifact, version, classifier, ext string) []string {
	return snapshotFileNames(artifact, version, classifier, ext, func() ([]byte, error) {
		return s.snapshotMeta(ctx, a, r, ModulePath(group, artifact, version)+"maven-metadata.xml")
	})
}

// snapshotMeta reads a version directory's maven-metadata.xml. Like Ivy,
// it verifies no checksum (snapshot metadata is rewritten on every
// deploy, and its checksum files are often stale). A remote file is
// recorded in the cache so that an offline resolution finds it.
func (s *Source) snapshotMeta(ctx context.Context, a asker, r *entry, rel string) ([]byte, error) {
	u := r.base + rel
	if _, ok := s.missing.Load(u); ok {
		return nil, ErrNotFound
	}
	data, err := s.metas.do(u, func() ([]byte, error) {
		if r.isFile() {
			p, err := safepath.Join(r.dir, rel)
			if err != nil {
				return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("repository %s: %w", r, err))
			}
			return readFileMax(p, MaxMetadataSize)
		}
		if e, ok := s.cache.Lookup(u); ok && (s.offline || a.spec) {
			return readFileMax(s.cache.BlobPath(e.Sha256), MaxMetadataSize)
		}
		if s.offline {
			return nil, cache.ErrNotCached
		}
		t, err := s.cache.NewTemp()
		if err != nil {
			return nil, err
		}
		defer t.Abort()
		if err := s.f.get(ctx, r.target(rel).priority(a.low), &capDest{w: fileDest{t}, max: MaxMetadataSize}); err != nil {
			return nil, err
		}
		sum := t.Sums()
		p, err := t.Commit()
		if err != nil {
			return nil, err
		}
		if err := s.cache.Record(u, cache.IndexEntry{Sha256: sum.SHA256, Size: sum.Size}); err != nil {
			return nil, err
		}
		return os.ReadFile(p)
	})
	if err != nil && (errors.Is(err, ErrNotFound) || errors.Is(err, fs.ErrNotExist)) {
		s.missing.Store(u, struct{}{})
	}
	return data, err
}
