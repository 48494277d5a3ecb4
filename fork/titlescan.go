package fork

import (
	"bytes"
	"context"
	"errors"
	"io"

	"rewind.dev/jsonl"
)

// titleCandidates returns, in file order and joined by newlines, the lines of ra [0, size) that
// may be title lines of the dialect: lines holding the JSON literal a title source's match
// requires (Claude: "custom-title", "ai-title"). It finds them with a block scan for those
// literals, which runs at memory speed; jsonl's Title then judges the few candidates by the
// dialect's full rules. ok is false when a source has no literal to look for (scan everything).
func titleCandidates(ctx context.Context, ra io.ReaderAt, size int64, d *jsonl.Dialect) (lines []byte, ok bool, err error) {
	var needles [][]byte
	for _, s := range d.Title.Sources {
		var lit []byte
		for _, c := range s.Match {
			if len(c.Equals) > 0 && len(c.Equals) > len(lit) {
				lit = c.Equals
			}
		}
		if len(lit) < 4 {
			return nil, false, nil
		}
		needles = append(needles, lit)
	}
	if len(needles) == 0 {
		return nil, true, nil
	}
	longest := 0
	for _, n := range needles {
		longest = max(longest, len(n))
	}
	const block = 4 << 20
	buf := make([]byte, block+longest)
	var starts []int64 // line starts of candidate lines, ascending
	for off := int64(0); off < size; off += block {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		b := buf[:min(int64(len(buf)), size-off)]
		if _, err := ra.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		for _, n := range needles {
			for i := 0; ; {
				j := bytes.Index(b[i:], n)
				if j < 0 || i+j >= block { // a hit in the overlap belongs to the next block
					break
				}
				at := off + int64(i+j)
				start, err := lineStart(ra, at)
				if err != nil {
					return nil, false, err
				}
				starts = append(starts, start)
				i += j + len(n)
			}
		}
	}
	sortUnique(&starts)
	for _, s := range starts {
		line, err := lineAt(ra, s, size)
		if err != nil {
			return nil, false, err
		}
		lines = append(append(lines, line...), '\n')
	}
	return lines, true, nil
}

// lineStart finds the start of the line holding byte at.
func lineStart(ra io.ReaderAt, at int64) (int64, error) {
	buf := make([]byte, 4096)
	for pos := at; pos > 0; {
		n := min(int64(len(buf)), pos)
		if _, err := ra.ReadAt(buf[:n], pos-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos - n + int64(i) + 1, nil
		}
		pos -= n
	}
	return 0, nil
}

// lineAt returns the line starting at start, without its newline (up to size).
func lineAt(ra io.ReaderAt, start, size int64) ([]byte, error) {
	var line []byte
	buf := make([]byte, 4096)
	for pos := start; pos < size; {
		n := min(int64(len(buf)), size-pos)
		if _, err := ra.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(line, buf[:i]...), nil
		}
		line = append(line, buf[:n]...)
		pos += n
	}
	return line, nil
}

func sortUnique(s *[]int64) {
	v := *s
	for i := 1; i < len(v); i++ { // insertion sort: candidates are few and nearly sorted
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	*s = out
}
