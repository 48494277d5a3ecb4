package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Line is one line of a transcript.
type Line struct {
	Offset int64  // where the line starts
	End    int64  // just past its newline (or past its last byte when incomplete)
	Data   []byte // the bytes without the newline; valid until the next read
	// Complete is false for a last line without a trailing newline: the writer may still be
	// writing it, so it is not part of a cursor and never a turn.
	Complete bool
}

// Stats counts what a read passed over.
type Stats struct {
	Lines      int64 `json:"lines"`      // complete lines
	Events     int64 `json:"events"`     // complete lines holding a JSON object
	Blank      int64 `json:"blank"`      // complete lines that are empty, white space, CR or NUL runs
	Garbage    int64 `json:"garbage"`    // complete lines that are not a JSON object
	CRLF       int64 `json:"crlf"`       // complete lines ending in CR LF
	Incomplete int64 `json:"incomplete"` // bytes after the last newline
}

// Reader reads lines forward with no length limit: a line is held whole in memory however
// long it is (a 100 MB line works), and nothing else is buffered beyond one block.
type Reader struct {
	br  *bufio.Reader
	off int64
	buf []byte
}

// NewReader reads lines from r, whose first byte is at offset in the file (used for
// Line.Offset).
func NewReader(r io.Reader, offset int64) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), off: offset}
}

// Next returns the next line. At the end it returns io.EOF; a last line without a newline comes
// back once with Complete false before io.EOF.
func (r *Reader) Next() (Line, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.buf = append(r.buf, chunk...)
		if err == nil {
			start := r.off
			r.off += int64(len(r.buf))
			return Line{Offset: start, End: r.off, Data: r.buf[:len(r.buf)-1], Complete: true}, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(r.buf) == 0 {
				return Line{}, io.EOF
			}
			start := r.off
			r.off += int64(len(r.buf))
			return Line{Offset: start, End: r.off, Data: r.buf, Complete: false}, nil
		}
		return Line{}, err
	}
}

// count adds one complete line to s.
func (s *Stats) count(data []byte) {
	s.Lines++
	if n := len(data); n > 0 && data[n-1] == '\r' {
		s.CRLF++
	}
	c := Clean(data)
	switch {
	case len(c) == 0:
		s.Blank++
	case c[0] == '{' && jsonValid(c):
		s.Events++
	default:
		s.Garbage++
	}
}

// ReverseReader reads complete lines backwards from an end offset, in blocks: the cost of
// reaching a line is the bytes between it and the end, not the size of the file. A line longer
// than a block is assembled whole (blocks grow by doubling, so a 100 MB line costs about 2×).
type ReverseReader struct {
	ra       io.ReaderAt
	buf      []byte // bytes [bufStart, cur) of the file, not yet returned
	spare    []byte
	bufStart int64
	cur      int64 // start of the last line returned: everything before is unread
	block    int
}

const reverseBlock = 256 << 10

// NewReverseReader reads the lines that end at or before end. end should be the end of the
// complete data (just past a newline, see LastNewline); bytes after the last newline before end
// are not returned.
func NewReverseReader(ra io.ReaderAt, end int64) *ReverseReader {
	return &ReverseReader{ra: ra, bufStart: end, cur: end, block: reverseBlock}
}

// Prev returns the line before the one returned last (the last complete line first). At the
// start of the file it returns io.EOF. Line.Data is valid until the next call.
func (r *ReverseReader) Prev() (Line, error) {
	if r.cur == 0 {
		return Line{}, io.EOF
	}
	end := r.cur
	// The line's own newline is at end-1; look for the one before it.
	searchFrom := int(end - 1 - r.bufStart) // exclusive bound within buf
	for {
		if i := lastIndexByte(r.buf[:max(searchFrom, 0)], '\n'); i >= 0 {
			start := r.bufStart + int64(i) + 1
			data := trimNewline(r.buf[i+1 : int(end-r.bufStart)])
			r.cur = start
			r.buf = r.buf[:i+1]
			r.block = reverseBlock
			return Line{Offset: start, End: end, Data: data, Complete: true}, nil
		}
		if r.bufStart == 0 {
			data := trimNewline(r.buf[:int(end-r.bufStart)])
			r.cur = 0
			r.buf = r.buf[:0]
			return Line{Offset: 0, End: end, Data: data, Complete: true}, nil
		}
		n := int64(r.block)
		if n > r.bufStart {
			n = r.bufStart
		}
		// Two buffers take turns, so a long scan does not allocate per block.
		need := int(n) + len(r.buf)
		if cap(r.spare) < need {
			r.spare = make([]byte, need, max(need, 2*reverseBlock))
		}
		grown := r.spare[:need]
		if _, err := r.ra.ReadAt(grown[:n], r.bufStart-n); err != nil && !errors.Is(err, io.EOF) {
			return Line{}, err
		}
		copy(grown[n:], r.buf)
		// Only the new bytes need searching: the old ones up to searchFrom had no newline
		// (when buf was empty, the new block's last byte is the line's own newline).
		searchFrom = min(searchFrom+int(n), int(n))
		r.spare = r.buf[:0]
		r.buf = grown
		r.bufStart -= n
		if r.block < 64<<20 {
			r.block *= 2
		}
	}
}

// trimNewline drops the newline that ends a complete line.
func trimNewline(data []byte) []byte {
	if n := len(data); n > 0 && data[n-1] == '\n' {
		return data[:n-1]
	}
	return data
}

// lastIndexByte is bytes.LastIndexByte, faster on long lines: that one is a plain loop, while
// bytes.IndexByte is vectorised, so windows from the end are searched forward.
func lastIndexByte(b []byte, c byte) int {
	const window = 4 << 10
	for end := len(b); end > 0; {
		start := max(0, end-window)
		w := b[start:end]
		last := -1
		for off := 0; ; {
			i := bytes.IndexByte(w[off:], c)
			if i < 0 {
				break
			}
			last = off + i
			off = last + 1
		}
		if last >= 0 {
			return start + last
		}
		end = start
	}
	return -1
}

// LastNewline returns the end of the complete data among the first size bytes of ra: just
// past the last newline, or 0 when there is none. It reads backwards from size in blocks, so
// its cost is the length of the incomplete last line, not the size of the file.
func LastNewline(ra io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	pos := size
	for pos > 0 {
		n := int64(len(buf))
		if n > pos {
			n = pos
		}
		b := buf[:n]
		if _, err := ra.ReadAt(b, pos-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := lastIndexByte(b, '\n'); i >= 0 {
			return pos - n + int64(i) + 1, nil
		}
		pos -= n
	}
	return 0, nil
}

func jsonValid(b []byte) bool { return json.Valid(b) }
