package fork

import (
	"bytes"
	"context"
	"errors"
	"io"

	"rewind.dev/jsonl"
)

// eventCounter counts, as bytes stream through it (an io.Writer), the lines that hold a JSON
// object — the events an event-log rewind reports as kept or removed. A line counts when,
// stripped as jsonl.Clean strips it, it starts with '{' and ends with '}'; a final fragment
// without a newline counts the same way (call done). This is jsonl's Stats.Events without the
// full JSON validation, which would cost more than the kernel copy of a large prefix; the two
// agree on every fixture (tested), and differ only on a malformed line that still starts and
// ends with a brace.
type eventCounter struct {
	n    int64
	line []byte // the ends of a line that crossed a write boundary
}

func (c *eventCounter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			c.line = keepEnds(c.line, b)
			break
		}
		if len(c.line) > 0 {
			if isEvent(keepEnds(c.line, b[:i])) {
				c.n++
			}
			c.line = c.line[:0]
		} else if isEvent(b[:i]) {
			c.n++
		}
		b = b[i+1:]
	}
	return n, nil
}

// done counts a final line without a newline and returns the count.
func (c *eventCounter) done() int64 {
	if len(c.line) > 0 && isEvent(c.line) {
		c.n++
	}
	c.line = nil
	return c.n
}

// keepEnds appends more to line, keeping only what judging a line needs: its first and last
// 64 bytes (beyond 256 bytes, the middle is dropped).
func keepEnds(line, more []byte) []byte {
	line = append(line, more...)
	if len(line) > 256 {
		line = append(line[:64], line[len(line)-64:]...)
	}
	return line
}

func isEvent(line []byte) bool {
	c := jsonl.Clean(line)
	return len(c) >= 2 && c[0] == '{' && c[len(c)-1] == '}'
}

// countEvents counts the events in [from, to) of ra, after those c has counted (c may be nil;
// it is finished).
func countEvents(ctx context.Context, ra io.ReaderAt, from, to int64, c *eventCounter) (int64, error) {
	if c == nil {
		c = &eventCounter{}
	}
	buf := make([]byte, 1<<20)
	for off := from; off < to; {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		b := buf[:min(int64(len(buf)), to-off)]
		if _, err := ra.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		c.Write(b)
		off += int64(len(b))
	}
	return c.done(), nil
}

// countingReaderAt counts the events in what is read through it, as long as the reads go
// forward: each read that reaches past the bytes seen so far without leaving a gap gives its
// new bytes to the counter; other reads (back, or ahead past a gap) count nothing. Bytes
// [0, seen) are counted; the caller counts the rest. So one read of a prefix serves both
// a scan of it and its count.
type countingReaderAt struct {
	ra   io.ReaderAt
	c    eventCounter
	seen int64
}

func (r *countingReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := r.ra.ReadAt(b, off)
	if off <= r.seen && off+int64(n) > r.seen {
		r.c.Write(b[r.seen-off : n])
		r.seen = off + int64(n)
	}
	return n, err
}
