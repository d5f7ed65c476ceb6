package wheel

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// ErrNotStreamable is matched (errors.Is) by Plan for a wheel whose
// installed bytes are not its members' bytes with RECORD's sha256: a
// member hashed with sha384 or sha512 in RECORD, or a script whose
// "#!python" line is rewritten. Install it instead.
var ErrNotStreamable = errors.New("the wheel's installed files cannot be read from it as they are")

// Planned is what Install would write, read from the wheel without
// writing anything: Files are Install's, in its order, each with an Open of
// its bytes.
type Planned struct {
	Installed
	open map[string]func() (io.ReadCloser, error)
}

// Open returns the bytes of the planned file at path (one of Files). A
// wheel member is inflated as it is read, and the read that reaches its end
// fails (errdefs.Invalid, ErrRecord, naming the wheel and the member) when
// its bytes are not RECORD's sha256 and size.
func (p *Planned) Open(path string) (io.ReadCloser, error) {
	open, ok := p.open[path]
	if !ok {
		return nil, errdefs.Errorf(errdefs.Internal, "wheel %s: %q is not a planned file", p.Name.File, path)
	}
	return open()
}

// Plan checks the wheel r (size bytes, named file) as Install does (every
// member's path, type, size, RECORD and WHEEL) and verifies the members
// that are not installed, but writes nothing: it returns the files Install
// would write to a root, with the same paths, sizes, modes and sha256s
// (RECORD's; INSTALLER and RECORD as Install writes them), each read from r
// by Planned.Open, checked as it is read. r must stay readable while the
// files are read. A wheel whose installed bytes differ from its members'
// is ErrNotStreamable (errdefs.Invalid); other refusals are Install's.
func Plan(ctx context.Context, r io.ReaderAt, size int64, file string, opts ...Option) (*Planned, error) {
	o, name, p, err := openWheel(r, size, file, opts)
	if err != nil {
		return nil, err
	}
	out := &Planned{Installed: Installed{Name: name, DistInfo: p.distInfo, Purelib: p.purelib, Skipped: p.skipped},
		open: map[string]func() (io.ReadCloser, error){}}
	fail := func(m member, err error) error {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("wheel %s: %.200q: %w", file, m.f.Name, err))
	}
	var buf []byte
	for _, m := range p.members {
		if m.target != "" && (m.row.algo != "sha256" || m.script && o.python != "") {
			return nil, fail(m, ErrNotStreamable)
		}
		if m.row.algo != "" && m.row.size >= 0 && int64(m.f.UncompressedSize64) != m.row.size {
			return nil, fail(m, fmt.Errorf("%w: %d bytes, RECORD says %d", ErrRecord, m.f.UncompressedSize64, m.row.size))
		}
		if m.target == "" {
			// Verified now: nothing reads it later.
			if buf == nil {
				buf = make([]byte, 64<<10)
			}
			if err := verifyMember(ctx, m, buf); err != nil {
				return nil, fail(m, err)
			}
			continue
		}
		f := File{Path: m.target, Size: int64(m.f.UncompressedSize64), Mode: m.mode}
		copy(f.SHA256[:], m.row.sum)
		out.Files = append(out.Files, f)
		out.open[m.target] = func() (io.ReadCloser, error) {
			rc, err := m.f.Open()
			if err != nil {
				return nil, fail(m, err)
			}
			return &checkedReader{rc: rc, h: sha256.New(), m: m, fail: fail}, nil
		}
	}
	add := func(path string, data []byte) File {
		f := File{Path: path, Size: int64(len(data)), Mode: 0o644, SHA256: sha256.Sum256(data)}
		out.open[path] = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		return f
	}
	byPath := func(a, b File) int { return strings.Compare(a.Path, b.Path) }
	out.Files = append(out.Files, add(p.distInfo+"/INSTALLER", []byte("prebake\n")))
	slices.SortFunc(out.Files, byPath)
	out.Files = append(out.Files, add(p.distInfo+"/RECORD", writeRecord(out.Files, p.distInfo+"/RECORD")))
	slices.SortFunc(out.Files, byPath)
	for _, f := range out.Files {
		out.Size += f.Size
	}
	return out, nil
}

// verifyMember reads m to its end, checking it against RECORD.
func verifyMember(ctx context.Context, m member, buf []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rc, err := m.f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	h := sha256.New()
	if m.row.algo != "" {
		h = hashes[m.row.algo]()
	}
	if _, err := io.CopyBuffer(h, ctxReader{ctx, rc}, buf); err != nil {
		return err
	}
	if m.row.algo != "" && !bytes.Equal(h.Sum(nil), m.row.sum) {
		return fmt.Errorf("%w: its %s is not RECORD's", ErrRecord, m.row.algo)
	}
	return nil
}

// checkedReader reads a member, failing the read that reaches its end when
// the bytes are not RECORD's.
type checkedReader struct {
	rc   io.ReadCloser
	h    hash.Hash
	n    int64
	m    member
	fail func(member, error) error
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	switch {
	case err == io.EOF:
		if !bytes.Equal(c.h.Sum(nil), c.m.row.sum) || c.n != int64(c.m.f.UncompressedSize64) {
			return n, c.fail(c.m, fmt.Errorf("%w: its sha256 is not RECORD's", ErrRecord))
		}
	case err != nil:
		return n, c.fail(c.m, err)
	}
	return n, err
}

func (c *checkedReader) Close() error { return c.rc.Close() }
