package layers

import (
	"errors"
	"io"
	"sync"
)

// chunkPipe connects two pipeline stages with a queue of fixed buffers, so
// both run at once (io.Pipe hands over one write at a time). The writer
// copies into a free chunk; the reader gets whole chunks and hands them back.
type chunkPipe struct {
	full    chan []byte
	free    chan []byte
	done    chan struct{} // closed when the reader gives up
	cur     []byte
	err     error // the writer's close error, set before full is closed
	rerr    error
	abort   sync.Once
	closeMu sync.Once
}

var errPipeAborted = errors.New("layer pipeline aborted")

func newChunkPipe(chunks, size int) *chunkPipe {
	p := &chunkPipe{full: make(chan []byte, chunks), free: make(chan []byte, chunks), done: make(chan struct{})}
	for range chunks {
		p.free <- make([]byte, 0, size)
	}
	return p
}

// Write copies b into chunks and queues the full ones.
func (p *chunkPipe) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		if p.cur == nil {
			select {
			case p.cur = <-p.free:
			case <-p.done:
				return n, p.readErr()
			}
		}
		k := copy(p.cur[len(p.cur):cap(p.cur)], b)
		p.cur = p.cur[:len(p.cur)+k]
		b, n = b[k:], n+k
		if len(p.cur) == cap(p.cur) {
			if err := p.send(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func (p *chunkPipe) send() error {
	select {
	case p.full <- p.cur:
		p.cur = nil
		return nil
	case <-p.done:
		return p.readErr()
	}
}

func (p *chunkPipe) readErr() error {
	if p.rerr != nil {
		return p.rerr
	}
	return errPipeAborted
}

// CloseWrite queues the last chunk and ends the stream with err (nil: EOF).
func (p *chunkPipe) CloseWrite(err error) {
	p.closeMu.Do(func() {
		if err == nil && len(p.cur) > 0 {
			err = p.send()
		}
		p.err = err
		close(p.full)
	})
}

// CloseRead makes the writer's next Write fail with err.
func (p *chunkPipe) CloseRead(err error) {
	p.abort.Do(func() {
		p.rerr = err
		close(p.done)
	})
}

// WriteTo writes every chunk to w until the writer closes; it returns the
// writer's error, or w's.
func (p *chunkPipe) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for c := range p.full {
		k, err := w.Write(c)
		n += int64(k)
		select {
		case p.free <- c[:0]:
		default:
		}
		if err != nil {
			p.CloseRead(err)
			return n, err
		}
	}
	return n, p.err
}
