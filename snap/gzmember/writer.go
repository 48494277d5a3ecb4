package gzmember

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"

	"rewind.dev/internal/ctxio"
)

// Writer compresses a stream as a sequence of independent gzip members,
// several at a time, written in order. Concatenated members are one valid
// gzip stream for gzip, tar and every reader that follows RFC 1952.
//
// Offset tells, for the next byte written, which member it will land in and
// how far into that member's uncompressed data it is; after Close, Start
// gives each member's offset in the compressed file.
type Writer struct {
	w     io.Writer
	level int
	extra []byte // the first member's header extra field (a snapshot's mark)

	cur      *bytes.Buffer // uncompressed bytes of the member being filled
	index    int           // the current member's index
	starts   []int64       // compressed offset of each member written
	pending  []chan compressed
	inflight chan struct{}
	written  int64 // compressed bytes written so far
	err      error
	raws     chan *bytes.Buffer // free buffers for uncompressed members
	outs     chan *bytes.Buffer // free buffers for compressed members
	writers  sync.Pool          // *gzip.Writer: a compressor's tables are worth reusing
}

type compressed struct {
	data *bytes.Buffer
	raw  *bytes.Buffer
	err  error
}

// NewWriter returns a Writer onto w that compresses at level (a gzip level)
// and puts extra in the first member's header.
func NewWriter(w io.Writer, level int, extra []byte) *Writer {
	n := max(2, runtime.GOMAXPROCS(0)*2)
	m := &Writer{w: w, level: level, extra: extra, inflight: make(chan struct{}, n), raws: make(chan *bytes.Buffer, n+1), outs: make(chan *bytes.Buffer, n+1)}
	m.cur = new(bytes.Buffer) // grows as written: an empty layer costs nothing
	return m
}

// compressor returns a gzip writer onto out, reused when one is free.
func (m *Writer) compressor(out io.Writer) (*gzip.Writer, error) {
	if zw, ok := m.writers.Get().(*gzip.Writer); ok {
		zw.Reset(out)
		return zw, nil
	}
	return gzip.NewWriterLevel(out, m.level)
}

// Offset returns where the next byte written will be found: the index of
// its member, and how many uncompressed bytes of that member come before it.
func (m *Writer) Offset() (member int, skip int64) {
	if m.cur.Len() >= memberSize {
		m.cut(false)
	}
	return m.index, int64(m.cur.Len())
}

// Start is the compressed offset of member i; valid after Close.
func (m *Writer) Start(i int) int64 { return m.starts[i] }

// Write adds p to the stream, cutting a member each time one is full.
func (m *Writer) Write(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	n := len(p)
	for len(p) > 0 {
		room := memberSize - m.cur.Len()
		if room <= 0 {
			m.cut(false)
			room = memberSize
		}
		k := min(room, len(p))
		m.cur.Write(p[:k])
		p = p[k:]
	}
	return n, m.err
}

// cut hands the current member to a compressor and starts the next one
// (an empty one when last: nothing more will be written).
func (m *Writer) cut(last bool) {
	if m.cur.Len() == 0 {
		return
	}
	raw := m.cur
	if last {
		m.cur = new(bytes.Buffer)
	} else {
		// A stream that fills one member fills more: take whole members, so
		// the buffer never grows by doubling (copying) on the way.
		m.cur = buffer(m.raws, memberSize)
	}
	ch := make(chan compressed, 1)
	first := m.index == 0
	m.inflight <- struct{}{}
	go func() {
		defer func() { <-m.inflight }()
		out := buffer(m.outs, raw.Len()/2) // level 1 leaves source code at about a quarter
		zw, err := m.compressor(out)
		if err == nil && first {
			zw.Header.Extra = m.extra
		}
		if err == nil {
			_, err = zw.Write(raw.Bytes())
		}
		if err == nil {
			err = zw.Close()
		}
		if err == nil {
			m.writers.Put(zw)
		}
		ch <- compressed{data: out, raw: raw, err: err}
	}()
	m.pending = append(m.pending, ch)
	m.index++
	m.flush(cap(m.inflight))
}

// flush writes finished members in order, keeping at most keep in flight.
func (m *Writer) flush(keep int) {
	for len(m.pending) > keep {
		c := <-m.pending[0]
		m.pending = m.pending[1:]
		if c.err != nil && m.err == nil {
			m.err = c.err
		}
		m.starts = append(m.starts, m.written)
		if m.err == nil {
			n, err := m.w.Write(c.data.Bytes())
			m.written += int64(n)
			if err != nil {
				m.err = err
			}
		}
		release(m.outs, c.data)
		release(m.raws, c.raw)
	}
}

// Close compresses what is left and writes every member.
func (m *Writer) Close() error {
	m.cut(true)
	m.flush(0)
	return m.err
}

// WriteRaw ends the member being filled and writes r, whole gzip members
// already compressed, after it: members copied from another archive as
// they are. What is written after starts a new member.
func (m *Writer) WriteRaw(ctx context.Context, r io.Reader) error {
	if m.err != nil {
		return m.err
	}
	m.cut(false)
	m.flush(0)
	if m.err != nil {
		return m.err
	}
	m.starts = append(m.starts, m.written)
	n, err := io.Copy(m.w, ctxio.Reader{Ctx: ctx, R: r})
	m.written += n
	m.index++
	if err != nil {
		m.err = err
	}
	return m.err
}
