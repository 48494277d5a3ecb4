package gzmember

import (
	"io"
	"sync"
)

// ReadAhead reads a Reader in a goroutine, a few blocks ahead of its
// reader, so that inflating overlaps with what the reader does with the
// bytes (a restore writing files) as pgzip's reader does; unlike pgzip's,
// it knows each member's place (At).
type ReadAhead struct {
	ms   *Reader
	mu   sync.Mutex // guards ms.starts, appended to by the goroutine
	full chan inflated
	free chan []byte
	stop chan struct{}
	done chan struct{}
	cur  inflated
	off  int
}

type inflated struct {
	b   []byte
	err error
}

const inflateBlock = 256 << 10

// NewReadAhead starts inflating ms ahead of its reader; Close stops it.
func NewReadAhead(ms *Reader) *ReadAhead {
	const n = 8
	a := &ReadAhead{ms: ms, full: make(chan inflated, n), free: make(chan []byte, n+1),
		stop: make(chan struct{}), done: make(chan struct{})}
	ms.lock = &a.mu
	for range n + 1 {
		a.free <- make([]byte, inflateBlock)
	}
	go a.run()
	return a
}

func (a *ReadAhead) run() {
	defer close(a.done)
	for {
		var b []byte
		select {
		case b = <-a.free:
		case <-a.stop:
			return
		}
		n, err := io.ReadFull(a.ms, b)
		if err == io.ErrUnexpectedEOF {
			err = io.EOF // a short last block
		}
		if n > 0 {
			select {
			case a.full <- inflated{b: b[:n]}:
			case <-a.stop:
				return
			}
		}
		if err != nil {
			select {
			case a.full <- inflated{err: err}:
			case <-a.stop:
			}
			return
		}
	}
}

// Read reads the inflated stream.
func (a *ReadAhead) Read(p []byte) (int, error) {
	for a.off == len(a.cur.b) {
		if a.cur.err != nil {
			return 0, a.cur.err
		}
		if a.cur.b != nil {
			a.free <- a.cur.b[:cap(a.cur.b)]
		}
		a.cur, a.off = <-a.full, 0
	}
	n := copy(p, a.cur.b[a.off:])
	a.off += n
	return n, nil
}

// At is Reader.At, for bytes this has read.
func (a *ReadAhead) At(pos int64) (coff, skip int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ms.At(pos)
}

// Close stops the goroutine and then closes the stream.
func (a *ReadAhead) Close() error {
	close(a.stop)
	<-a.done
	return a.ms.Close()
}
