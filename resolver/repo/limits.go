package repo

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// Size caps on what a repository serves, over HTTP and file:// alike: a
// file over its cap is bad input (errdefs.Invalid), never read whole.
const (
	MaxPOMSize      = 16 << 20 // a POM (Central's largest are a few hundred KiB)
	MaxMetadataSize = 16 << 20 // maven-metadata.xml (10,000 versions are ~300 KiB)
	MaxChecksumSize = 64 << 10 // .sha1, .sha256, .md5
	maxListingSize  = 8 << 20  // an HTML directory listing
	// DefaultMaxArtifactSize caps a downloaded artifact (a jar) that no lock
	// gives the size of; a locked one is capped at its locked size.
	DefaultMaxArtifactSize = 2 << 30
)

// ErrTooLarge is matched (errors.Is) by a repository file over its cap.
var ErrTooLarge = errors.New("larger than the limit")

func tooLarge(max int64) error {
	return fmt.Errorf("%w of %d bytes", ErrTooLarge, max)
}

// sizeCap is the cap of a metadata-sized repository file by its name; 0
// means an artifact (capped by the lock or DefaultMaxArtifactSize).
func sizeCap(rel string) int64 {
	switch {
	case strings.HasSuffix(rel, ".pom"):
		return MaxPOMSize
	case strings.HasSuffix(rel, "maven-metadata.xml"):
		return MaxMetadataSize
	case strings.HasSuffix(rel, ".sha1"), strings.HasSuffix(rel, ".sha256"), strings.HasSuffix(rel, ".md5"):
		return MaxChecksumSize
	}
	return 0
}

// checkSize fails with 65 when a file of size bytes is over max (0: no cap).
func checkSize(name string, size, max int64) error {
	if max > 0 && size > max {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("%s: %d bytes, %w", name, size, tooLarge(max)))
	}
	return nil
}

// readFileMax reads a local file of at most max bytes; a larger one fails
// with 65 before it is read.
func readFileMax(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("%s: %w", path, tooLarge(max)))
	}
	return data, nil
}

// capDest fails a download once it passes max bytes (a write error that
// matches ErrTooLarge, errdefs.Invalid).
type capDest struct {
	w   resetWriter
	max int64
	n   int64
}

func (d *capDest) Write(p []byte) (int, error) {
	if d.n+int64(len(p)) > d.max {
		return 0, &writeError{tooLarge(d.max)}
	}
	d.n += int64(len(p))
	return d.w.Write(p)
}

func (d *capDest) reset() error {
	d.n = 0
	return d.w.reset()
}

func (d *capDest) begin(total int64) {
	if s, ok := d.w.(contentLengthSetter); ok {
		s.begin(total)
	}
}

// capped is a download destination with a size cap: fetcher.once refuses
// a response whose Content-Length is over it before reading the body.
type capped interface{ limit() int64 }

var (
	_ capped = (*capDest)(nil)
	_ capped = (*memBuf)(nil)
	_ capped = teeDest{}
)

func (d *capDest) limit() int64 { return d.max }
func (m *memBuf) limit() int64  { return int64(m.max) }
func (d teeDest) limit() int64  { return d.mem.limit() }

// limit passes on the cap of the destination okDest wraps (none: no cap).
func (d *okDest) limit() int64 { return limitOf(d.resetWriter) }

// limit passes on the cap of the destination trackedDest wraps.
func (d *trackedDest) limit() int64 { return limitOf(d.resetWriter) }

func limitOf(w resetWriter) int64 {
	if c, ok := w.(capped); ok {
		return c.limit()
	}
	return math.MaxInt64
}

// metadataSized is true for a URL of a POM, maven-metadata.xml, a checksum
// or a directory listing: a small file that must arrive whole within the
// metadata deadline (an artifact must only keep a minimum rate).
func metadataSized(u string) bool {
	return sizeCap(u) > 0 || strings.HasSuffix(u, "/")
}
