package snap

import (
	"bufio"
	"bytes"
	"io"
	"math/bits"
	"runtime"
	"sort"
	"sync"

	"github.com/klauspost/compress/gzip"

	"rewind.dev/internal/ctxio"
)

// memberSize is how much of the tar stream goes into one gzip member. Each
// member is compressed on its own (no shared dictionary), so any member can
// be inflated without the ones before it: a file's content is reached by
// seeking to its member and inflating at most this much.
const memberSize = 1 << 20

// memberWriter compresses a stream as a sequence of independent gzip
// members, several at a time, written in order. Concatenated members are
// one valid gzip stream for gzip, tar and every reader that follows RFC 1952.
//
// Offset tells, for the next byte written, which member it will land in and
// how far into that member's uncompressed data it is; after Close, Start
// gives each member's offset in the compressed file.
type memberWriter struct {
	w     io.Writer
	level int
	extra []byte // the first member's header extra field (see archiveMark)

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

func newMemberWriter(w io.Writer, level int, extra []byte) *memberWriter {
	n := max(2, runtime.GOMAXPROCS(0)*2)
	m := &memberWriter{w: w, level: level, extra: extra, inflight: make(chan struct{}, n), raws: make(chan *bytes.Buffer, n+1), outs: make(chan *bytes.Buffer, n+1)}
	m.cur = new(bytes.Buffer) // grows as written: an empty layer costs nothing
	return m
}

// compressor returns a gzip writer onto out, reused when one is free.
func (m *memberWriter) compressor(out io.Writer) (*gzip.Writer, error) {
	if zw, ok := m.writers.Get().(*gzip.Writer); ok {
		zw.Reset(out)
		return zw, nil
	}
	return gzip.NewWriterLevel(out, m.level)
}

// buffer returns a free buffer from pool, or a new one of capacity size.
func buffer(pool chan *bytes.Buffer, size int) *bytes.Buffer {
	select {
	case b := <-pool:
		b.Reset()
		return b
	default:
		return bytes.NewBuffer(make([]byte, 0, size))
	}
}

func release(pool chan *bytes.Buffer, b *bytes.Buffer) {
	select {
	case pool <- b:
	default:
	}
}

// Offset returns where the next byte written will be found: the index of
// its member, and how many uncompressed bytes of that member come before it.
func (m *memberWriter) Offset() (member int, skip int64) {
	if m.cur.Len() >= memberSize {
		m.cut(false)
	}
	return m.index, int64(m.cur.Len())
}

// Start is the compressed offset of member i; valid after Close.
func (m *memberWriter) Start(i int) int64 { return m.starts[i] }

func (m *memberWriter) Write(p []byte) (int, error) {
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
func (m *memberWriter) cut(last bool) {
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
func (m *memberWriter) flush(keep int) {
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
func (m *memberWriter) Close() error {
	m.cut(true)
	m.flush(0)
	return m.err
}

// memberStream reads the gzip members of an archive one after another as
// one stream, verifying each member's checksum, and knows where each member
// starts: its offset in the file and the offset of its first byte in the
// stream. The gzip reader takes from its bufio.Reader exactly the bytes it
// uses, so what it consumed (bufferedCount) is where the next member starts.
type memberStream struct {
	in     *bufferedCount
	zr     *gzip.Reader
	mr     *memberReader
	starts []memberStart
	pos    int64       // inflated bytes read
	lock   *sync.Mutex // guards starts when an inflateAhead reads it
}

type memberStart struct{ coff, pos int64 }

// memberReaders holds the readers of finished member streams: a store's
// validate reads thousands of archives of a few KiB each, and a gzip
// reader's window and a 256 KiB buffer apiece were most of what it
// allocated.
var memberReaders sync.Pool

type memberReader struct {
	br *bufio.Reader
	zr *gzip.Reader
}

// newMemberStream reads the archive r, of size bytes (its buffer is no
// larger). Close hands its readers on to the next.
func newMemberStream(r io.Reader, size int64) (*memberStream, error) {
	mr, _ := memberReaders.Get().(*memberReader)
	if mr == nil {
		mr = &memberReader{}
	}
	// Sizes round up to powers of two, so that pooled buffers fit most
	// archives; small archives get a small buffer.
	bufSize := min(256<<10, max(4<<10, 1<<bits.Len64(uint64(max(size, 1)-1))))
	if mr.br == nil || mr.br.Size() < bufSize {
		mr.br = bufio.NewReaderSize(nil, bufSize)
	}
	in := newBufferedCount(mr.br, r)
	var err error
	if mr.zr == nil {
		mr.zr, err = gzip.NewReader(in.br)
	} else {
		err = mr.zr.Reset(in.br)
	}
	if err != nil {
		mr.br.Reset(nil)
		memberReaders.Put(mr)
		return nil, err
	}
	mr.zr.Multistream(false)
	return &memberStream{in: in, zr: mr.zr, mr: mr, starts: []memberStart{{0, 0}}}, nil
}

// Close hands the stream's readers on; it must not be read after.
func (m *memberStream) Close() error {
	if m.mr != nil {
		m.mr.br.Reset(nil)
		memberReaders.Put(m.mr)
		m.mr, m.zr, m.in = nil, nil, nil
	}
	return nil
}

func (m *memberStream) Read(p []byte) (int, error) {
	for {
		n, err := m.zr.Read(p)
		m.pos += int64(n)
		if err != io.EOF {
			return n, err
		}
		// The member ended, its checksum verified: the next one, if any.
		coff := m.in.consumed()
		if err := m.zr.Reset(m.in.br); err != nil {
			return n, err // io.EOF at the end of the file
		}
		m.zr.Multistream(false)
		if m.lock != nil {
			m.lock.Lock()
		}
		m.starts = append(m.starts, memberStart{coff, m.pos})
		if m.lock != nil {
			m.lock.Unlock()
		}
		if n > 0 {
			return n, nil
		}
	}
}

// at returns the member that holds the stream's byte pos: its offset in
// the file, and how many of its inflated bytes come before pos.
func (m *memberStream) at(pos int64) (coff, skip int64) {
	i := sort.Search(len(m.starts), func(i int) bool { return m.starts[i].pos > pos }) - 1
	return m.starts[i].coff, pos - m.starts[i].pos
}

// bufferedCount is a bufio.Reader over a reader that counts what it
// reads, so that how much of the input has been consumed through the
// buffer is known. The gzip reader is handed the *bufio.Reader itself:
// flate inflates fastest from one, and takes from it exactly the bytes it
// uses.
type bufferedCount struct {
	br *bufio.Reader
	cr ctxio.CountingReader
}

func newBufferedCount(br *bufio.Reader, r io.Reader) *bufferedCount {
	c := &bufferedCount{br: br, cr: ctxio.CountingReader{R: r}}
	if br == nil {
		c.br = bufio.NewReader(&c.cr)
	} else {
		br.Reset(&c.cr)
	}
	return c
}

// consumed is how many bytes of the input were read through the buffer.
func (c *bufferedCount) consumed() int64 { return c.cr.N - int64(c.br.Buffered()) }

// inflateAhead reads a memberStream in a goroutine, a few blocks ahead of
// its reader, so that inflating overlaps with what the reader does with
// the bytes (a restore writing files) as pgzip's reader does; unlike
// pgzip's, it knows each member's place (at).
type inflateAhead struct {
	ms   *memberStream
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

func newInflateAhead(ms *memberStream) *inflateAhead {
	const n = 8
	a := &inflateAhead{ms: ms, full: make(chan inflated, n), free: make(chan []byte, n+1),
		stop: make(chan struct{}), done: make(chan struct{})}
	ms.lock = &a.mu
	for range n + 1 {
		a.free <- make([]byte, inflateBlock)
	}
	go a.run()
	return a
}

func (a *inflateAhead) run() {
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

func (a *inflateAhead) Read(p []byte) (int, error) {
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

func (a *inflateAhead) at(pos int64) (coff, skip int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ms.at(pos)
}

// Close stops the goroutine and then closes the stream.
func (a *inflateAhead) Close() error {
	close(a.stop)
	<-a.done
	return a.ms.Close()
}
