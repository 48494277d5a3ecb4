package gzmember

import (
	"bufio"
	"io"
	"math/bits"
	"sort"
	"sync"

	"github.com/klauspost/compress/gzip"

	"rewind.dev/internal/ctxio"
)

// Reader reads the gzip members of an archive one after another as one
// stream, verifying each member's checksum, and knows where each member
// starts: its offset in the file and the offset of its first byte in the
// stream. The gzip reader takes from its bufio.Reader exactly the bytes it
// uses, so what it consumed (bufferedCount) is where the next member starts.
type Reader struct {
	in     *bufferedCount
	zr     *gzip.Reader
	mr     *pooledReader
	starts []memberStart
	pos    int64       // inflated bytes read
	lock   *sync.Mutex // guards starts when a ReadAhead reads it
}

type memberStart struct{ coff, pos int64 }

// pooledReaders holds the readers of finished Readers: a store's validate
// reads thousands of archives of a few KiB each, and a gzip reader's window
// and a 256 KiB buffer apiece were most of what it allocated.
var pooledReaders sync.Pool

type pooledReader struct {
	br *bufio.Reader
	zr *gzip.Reader
}

// NewReader reads the archive r, of size bytes (its buffer is no larger).
// Close hands its readers on to the next.
func NewReader(r io.Reader, size int64) (*Reader, error) {
	mr, _ := pooledReaders.Get().(*pooledReader)
	if mr == nil {
		mr = &pooledReader{}
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
		pooledReaders.Put(mr)
		return nil, err
	}
	mr.zr.Multistream(false)
	return &Reader{in: in, zr: mr.zr, mr: mr, starts: []memberStart{{0, 0}}}, nil
}

// Extra is the header extra field of the member being read; read before
// the first Read, it is the first member's (a snapshot's mark).
func (m *Reader) Extra() []byte { return m.zr.Header.Extra }

// Close hands the stream's readers on; it must not be read after.
func (m *Reader) Close() error {
	if m.mr != nil {
		m.mr.br.Reset(nil)
		pooledReaders.Put(m.mr)
		m.mr, m.zr, m.in = nil, nil, nil
	}
	return nil
}

// Read reads the inflated stream, going on from each member to the next.
func (m *Reader) Read(p []byte) (int, error) {
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

// At returns the member that holds the stream's byte pos, which must
// have been read: the member's offset in the file, and how many of its
// inflated bytes come before pos.
func (m *Reader) At(pos int64) (coff, skip int64) {
	i := sort.Search(len(m.starts), func(i int) bool { return m.starts[i].pos > pos }) - 1
	return m.starts[i].coff, pos - m.starts[i].pos
}

// SingleReader inflates one gzip member alone, verifying its checksum, and
// tells how long it was compressed.
type SingleReader struct {
	in *bufferedCount
	zr *gzip.Reader
}

// NewSingleReader reads the gzip member at the start of r and nothing
// after it.
func NewSingleReader(r io.Reader) (*SingleReader, error) {
	in := newBufferedCount(bufio.NewReaderSize(nil, 64<<10), r)
	zr, err := gzip.NewReader(in.br)
	if err != nil {
		return nil, err
	}
	zr.Multistream(false)
	return &SingleReader{in: in, zr: zr}, nil
}

// Read reads the member's inflated bytes; io.EOF at its end, once its
// checksum is verified.
func (s *SingleReader) Read(p []byte) (int, error) { return s.zr.Read(p) }

// CompressedLen is how many bytes of r the member took; valid once it has
// been read to its end.
func (s *SingleReader) CompressedLen() int64 { return s.in.consumed() }

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
