package sitepkgs

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
)

// Prefetcher reads a tree's entries ahead of a writer that opens them in
// order (a layer's or an archive's tar), on worker goroutines, so that
// inflating the wheels' members (the most of a streaming tree's cost) runs
// on every core while the writer writes. An entry is read into memory
// whole, checked (Entry.Open's reader fails at its end when the bytes are
// not RECORD's), within a bound on the bytes held; an entry larger than the
// bound is opened by the writer itself when its turn comes. Nothing is read
// before the first Open, so a writer that opens nothing (a layer cache hit)
// costs nothing.
type Prefetcher struct {
	ctx     context.Context
	cancel  context.CancelFunc
	entries []Entry
	workers int
	budget  int64

	start sync.Once
	next  atomic.Int64
	slots []prefetched
	wg    sync.WaitGroup

	mu   sync.Mutex
	cond *sync.Cond
	held int64 // bytes read and not yet consumed
	turn int   // the entry whose reservation is next
}

type prefetched struct {
	done   chan struct{}
	data   []byte
	err    error
	direct bool // larger than the bound: the writer opens it
}

// Prefetch returns a Prefetcher of t's entries with workers goroutines
// (at least 1) holding at most budget bytes read ahead. Close stops it.
func (t *Tree) Prefetch(ctx context.Context, workers int, budget int64) *Prefetcher {
	ctx, cancel := context.WithCancel(ctx)
	p := &Prefetcher{ctx: ctx, cancel: cancel, entries: t.Entries, workers: max(1, workers), budget: budget,
		slots: make([]prefetched, len(t.Entries))}
	for i := range p.slots {
		p.slots[i].done = make(chan struct{})
	}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// Open returns the bytes of entry i (t.Entries[i]); the entries must be
// opened in order, each once.
func (p *Prefetcher) Open(i int) (io.ReadCloser, error) {
	p.start.Do(func() {
		for range p.workers {
			p.wg.Add(1)
			go p.work()
		}
	})
	s := &p.slots[i]
	select {
	case <-s.done:
	case <-p.ctx.Done():
		return nil, p.ctx.Err()
	}
	if s.direct {
		return p.entries[i].Open()
	}
	if s.err != nil {
		return nil, s.err
	}
	data := s.data
	s.data = nil
	return &heldReader{Reader: bytes.NewReader(data), p: p, n: int64(len(data))}, nil
}

// work reads the next unclaimed entry, in order, until none is left.
func (p *Prefetcher) work() {
	defer p.wg.Done()
	for {
		i := int(p.next.Add(1) - 1)
		if i >= len(p.entries) {
			return
		}
		s := &p.slots[i]
		e := p.entries[i]
		if e.Size > p.budget {
			s.direct = true
			if !p.reserve(i, 0) {
				close(s.done)
				return
			}
			close(s.done)
			continue
		}
		if !p.reserve(i, e.Size) {
			s.err = p.ctx.Err()
			close(s.done)
			return
		}
		s.data, s.err = readEntry(e)
		if s.err != nil {
			p.release(e.Size)
		}
		close(s.done)
	}
}

// readEntry reads e whole, checked as Entry.Open's reader checks it.
func readEntry(e Entry) ([]byte, error) {
	rc, err := e.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, e.Size)
	n, err := io.ReadFull(rc, buf)
	if err != nil {
		return nil, err
	}
	// The end of the member: a reader checks its bytes there.
	var one [1]byte
	if m, err := rc.Read(one[:]); m > 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			// Longer than its size: the writer finds it and says so.
			return append(buf[:n], one[:m]...), nil
		}
		return nil, err
	}
	return buf[:n], nil
}

// reserve waits for entry i's turn (the entries reserve in order, so the
// bytes held are always of entries before the one the writer waits for)
// and until n more bytes fit in the budget; false once stopped.
func (p *Prefetcher) reserve(i int, n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.turn != i || p.held > 0 && p.held+n > p.budget {
		if p.ctx.Err() != nil {
			return false
		}
		p.cond.Wait()
	}
	if p.ctx.Err() != nil {
		return false
	}
	p.held += n
	p.turn++
	p.cond.Broadcast()
	return true
}

func (p *Prefetcher) release(n int64) {
	p.mu.Lock()
	p.held -= n
	p.mu.Unlock()
	p.cond.Broadcast()
}

// Close stops the workers and waits for them.
func (p *Prefetcher) Close() {
	p.mu.Lock() // a worker between its check and its Wait holds it
	p.cancel()
	p.mu.Unlock()
	p.cond.Broadcast()
	p.wg.Wait()
}

// heldReader is a prefetched entry; Close gives its bytes back to the
// budget.
type heldReader struct {
	*bytes.Reader
	p      *Prefetcher
	n      int64
	closed bool
}

func (h *heldReader) Close() error {
	if !h.closed {
		h.closed = true
		h.p.release(h.n)
	}
	return nil
}
