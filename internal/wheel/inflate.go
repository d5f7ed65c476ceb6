package wheel

import (
	"archive/zip"
	"bufio"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// inflateBuffer is the read size from the wheel file: a member's
// compressed bytes are read from it in chunks this large (pread calls),
// not the 4 KiB of archive/zip's own reader.
const inflateBuffer = 64 << 10

// inflaters are idle deflate readers (klauspost/compress/flate, whose
// decoder reads a bufio.Reader without an interface call per byte: about
// twice the speed of compress/flate here), reused across members as
// archive/zip reuses its own.
var inflaters sync.Pool

// inflater is a pooled deflate reader and its buffered source.
type inflater struct {
	io.ReadCloser
	br     *bufio.Reader
	closed bool
}

// newInflater is archive/zip's Decompressor for Deflate (see
// useInflater).
func newInflater(r io.Reader) io.ReadCloser {
	if z, ok := inflaters.Get().(*inflater); ok {
		z.br.Reset(r)
		if err := z.ReadCloser.(flate.Resetter).Reset(z.br, nil); err == nil {
			z.closed = false
			return z
		}
	}
	br := bufio.NewReaderSize(r, inflateBuffer)
	return &inflater{ReadCloser: flate.NewReader(br), br: br}
}

func (z *inflater) Close() error {
	if z.closed {
		return nil
	}
	z.closed = true
	err := z.ReadCloser.Close()
	z.br.Reset(nil)
	inflaters.Put(z)
	return err
}

// useInflater makes zr inflate its members with newInflater (the same
// bytes: deflate decodes one way).
func useInflater(zr *zip.Reader) { zr.RegisterDecompressor(zip.Deflate, newInflater) }
