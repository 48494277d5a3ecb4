package snap

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unsafe"
)

// entryStream reads the entries of a manifest opened with OpenManifest: its
// full manifest's file, read again on each pass a chunk at a time, with the
// chain's deltas laid over it.
type entryStream struct {
	file    string // the full manifest at the chain's end
	header  string // its header line as first read, to tell it was not replaced since
	version int
	archive string          // its own archive (absolute): the source of entries that name none
	over    []Entry         // the deltas' newest entry of each path they list, in walk order
	removed map[string]bool // paths a delta removed
}

// streamChunk is how much of a full manifest a pass holds at once (a
// variable for tests, which make lines straddle chunks).
var streamChunk = 1 << 20

// each calls fn with every entry of m in walk order. Entries of a manifest
// from OpenManifest are read as the pass goes: fn must not keep the entry
// or its strings (paths, hashes) past its call; it copies what it keeps.
// An error from fn ends the pass and is returned.
func (m *Manifest) each(fn func(e *Entry) error) error {
	if m.stream == nil {
		for i := range m.Entries {
			if err := fn(&m.Entries[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return m.stream.each(fn)
}

// ReadThrough reads every line of m's chain, for the errors a pass over it
// would meet, and keeps none.
func (m *Manifest) ReadThrough() error {
	return m.each(func(*Entry) error { return nil })
}

func (s *entryStream) each(fn func(e *Entry) error) error {
	f, err := os.Open(s.file)
	if err != nil {
		return &ManifestError{Path: s.file, Err: err}
	}
	defer f.Close()
	dir := filepath.Dir(s.file)
	srcs := map[string]string{}
	oi := 0
	emit := func(e *Entry) error { // a base entry, after the deltas' entries before it
		for oi < len(s.over) && (e == nil || comparePaths(s.over[oi].Path, e.Path) <= 0) {
			o := &s.over[oi]
			oi++
			if e != nil && o.Path == e.Path {
				return fn(o) // the delta's entry in place of the base's
			}
			if err := fn(o); err != nil {
				return err
			}
		}
		if e == nil || s.removed[e.Path] {
			return nil
		}
		return fn(e)
	}
	var e Entry // (one for the pass: fn does not keep it)
	buf := make([]byte, streamChunk)
	n, lineNo, first := 0, 1, true
	for {
		k, rerr := io.ReadFull(f, buf[n:])
		n += k
		end := bytes.LastIndexByte(buf[:n], '\n') + 1
		if rerr != nil && rerr != io.ErrUnexpectedEOF && rerr != io.EOF {
			return &ManifestError{Path: s.file, Err: rerr}
		}
		done := rerr != nil
		if done {
			end = n
		}
		if end == 0 && !done { // a line longer than the buffer
			buf = append(buf, make([]byte, len(buf))...)
			continue
		}
		// The entries' strings are slices of the buffer, which the next chunk
		// overwrites: no pass allocates the tree's worth of text, which is
		// what fn's contract (copy what it keeps) is for.
		text := unsafe.String(unsafe.SliceData(buf), end)
		for len(text) > 0 {
			var line string
			line, text, _ = strings.Cut(text, "\n")
			if first {
				first = false
				if line != strings.TrimSuffix(s.header, "\n") {
					return &ManifestError{Path: s.file, Err: fmt.Errorf("it changed while it was read")}
				}
				continue
			}
			lineNo++
			if line == "" {
				continue
			}
			var removed bool
			var err error
			e, removed, err = parseManifestLine(line, s.version)
			if err != nil {
				return &ManifestError{Path: s.file, Err: fmt.Errorf("line %d: %w", lineNo, err)}
			}
			if removed {
				continue // (a full manifest has none)
			}
			if e.Kind == KindFile {
				switch abs, ok := srcs[e.Src]; {
				case e.Src == "":
					e.Src = s.archive
				case ok:
					e.Src = abs
				default:
					abs = absFrom(dir, e.Src)
					srcs[strings.Clone(e.Src)] = abs
					e.Src = abs
				}
			}
			if err := emit(&e); err != nil {
				return err
			}
		}
		if done {
			return emit(nil)
		}
		n = copy(buf, buf[end:n])
	}
}
