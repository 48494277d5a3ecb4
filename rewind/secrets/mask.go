package secrets

import (
	"bytes"
	"cmp"
	"io"
	"slices"
)

// Masking overwrites a secret's bytes with '*', one for one: what is
// masked keeps its length, and every offset after it stays where it was.
// Some bytes are kept, so that the text stays what it was, of a kind:
// line breaks (lines keep their numbers), and quotes and backslash escapes
// (\n, \", \u00e9), so that a string literal or a JSON string that holds a
// secret is one still. A private key in a JSON string is left as its
// escapes, "\n" after "\n", its characters masked.
const maskByte = '*'

// span is a stretch [start, end) of bytes to mask.
type span struct{ start, end int64 }

// spans returns the stretches fs cover, in order, overlapping ones merged.
func spans(fs []Finding) []span {
	var out []span
	for _, f := range fs {
		if f.End > f.Start {
			out = append(out, span{f.Start, f.End})
		}
	}
	slices.SortFunc(out, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	merged := out[:0]
	for _, s := range out {
		if n := len(merged); n > 0 && s.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, s.end)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// Mask masks the secrets fs found in content (by Scan), in place: each
// byte of each but line breaks, quotes and backslash escapes becomes '*'.
func Mask(content []byte, fs []Finding) {
	for _, s := range spans(fs) {
		end := min(s.end, int64(len(content)))
		i := escapeOver(content, s.start)
		for i < end {
			switch c := content[i]; c {
			case '\\':
				i = escapeEnd(content, i)
				continue
			case '\n', '\r', '"':
			default:
				content[i] = maskByte
			}
			i++
		}
	}
}

// escapeEnd returns the end of the backslash escape at content[i]: \u
// and four hex digits, or a backslash and the byte after it.
func escapeEnd(content []byte, i int64) int64 {
	n := int64(2)
	if i+1 < int64(len(content)) && content[i+1] == 'u' {
		n = 6
	}
	return min(i+n, int64(len(content)))
}

// escapeOver returns where the backslash escape that at lies inside ends,
// or at when it lies inside none. A backslash starts an escape when an
// even number of backslashes comes before it.
func escapeOver(content []byte, at int64) int64 {
	for q := at - 1; q >= 0 && q >= at-5; q-- {
		if content[q] != '\\' {
			continue
		}
		run := int64(0)
		for j := q - 1; j >= 0 && content[j] == '\\'; j-- {
			run++
		}
		if run%2 == 0 && escapeEnd(content, q) > at {
			return escapeEnd(content, q)
		}
	}
	return at
}

// JSONLinesMasker masks secrets in JSON Lines (a transcript) as they are
// written through it to another writer: the bytes of the secrets Scan or
// ScanReader found in the same stream, but only inside JSON strings and
// outside their escapes — every line that was JSON stays JSON, of the same
// length.
type JSONLinesMasker struct {
	w     io.Writer
	spans []span
	next  int   // the first span not yet passed
	off   int64 // the stream offset of the next byte written
	str   bool  // inside a string
	esc   int   // -1: after a backslash; n > 0: hex digits of a \u escape to come
	buf   []byte
}

// NewJSONLinesMasker returns a masker of the secrets fs onto w.
func NewJSONLinesMasker(w io.Writer, fs []Finding) *JSONLinesMasker {
	return &JSONLinesMasker{w: w, spans: spans(fs)}
}

// Write writes p to the masker's writer, masked; p is not changed.
func (m *JSONLinesMasker) Write(p []byte) (int, error) {
	out := p
	if m.next < len(m.spans) {
		m.buf = append(m.buf[:0], p...)
		out = m.buf
		m.mask(out)
	}
	m.off += int64(len(p))
	n, err := m.w.Write(out)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}

// mask masks b, the stream's bytes at m.off, in place.
func (m *JSONLinesMasker) mask(b []byte) {
	lex := 0 // b holds no line break before lex where the next secret starts past it
	for i := 0; i < len(b); i++ {
		o := m.off + int64(i)
		for m.next < len(m.spans) && m.spans[m.next].end <= o {
			m.next++
		}
		if m.next == len(m.spans) {
			return
		}
		// Up to the next secret, only the state at its line's start counts.
		if start := m.spans[m.next].start; start > o && i >= lex {
			upto := int(min(start-m.off, int64(len(b))))
			if j := bytes.LastIndexByte(b[i:upto], '\n'); j >= 0 {
				i += j
				m.str, m.esc = false, 0
				continue
			}
			lex = upto
		}
		c := b[i]
		keep := true
		switch {
		case c == '\n':
			m.str, m.esc = false, 0
		case m.esc == -1:
			m.esc = 0
			if c == 'u' {
				m.esc = 4
			}
		case m.esc > 0:
			m.esc--
		case !m.str:
			m.str = c == '"'
		case c == '\\':
			m.esc = -1
		case c == '"':
			m.str = false
		default:
			keep = false
		}
		if !keep && o >= m.spans[m.next].start {
			b[i] = maskByte
		}
	}
}
