package snap

import (
	"bytes"
	"cmp"
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
	chunk   int             // instead of streamChunk (tests)
}

// streamChunk is how much of a full manifest a pass holds at once. Tests
// make lines straddle chunks (entryStream.chunk).
const streamChunk = 1 << 20

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
	buf := make([]byte, cmp.Or(s.chunk, streamChunk))
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

// Pick returns copies of the entries of m whose paths want takes, in walk
// order, found in one pass: m may be one opened with OpenManifest, whose
// tree is not held. want must not keep the path it is given.
func (m *Manifest) Pick(want func(path string) bool) ([]Entry, error) {
	var out []Entry
	err := m.each(func(e *Entry) error {
		if want(e.Path) {
			c := *e
			c.Path, c.Hash, c.Link = strings.Clone(e.Path), strings.Clone(e.Hash), strings.Clone(e.Link)
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// Overlay returns the snapshot m with the entries of set in (each in place
// of m's of its path, if any) and the paths of remove out, for a restore to
// read: it is not written (its header is m's, its tree hash not the
// overlay's). When m was opened with OpenManifest, so is the overlay: its
// entries are read through m's as a pass goes, not held.
func (m *Manifest) Overlay(set []Entry, remove []string) *Manifest {
	o := *m
	o.srcs, o.recall, o.sparse = nil, nil, false
	gone := make(map[string]bool, len(remove))
	for _, p := range remove {
		gone[p] = true
	}
	if m.stream == nil {
		o.Entries = overlaid(m.Entries, set, gone)
		return &o
	}
	s := *m.stream
	s.removed = make(map[string]bool, len(m.stream.removed)+len(remove))
	for p := range m.stream.removed {
		s.removed[p] = true
	}
	for p := range gone {
		s.removed[p] = true // (a base entry's)
	}
	s.over = overlaid(m.stream.over, set, gone)
	o.stream = &s
	return &o
}

// overlaid is entries with those of set in (each in place of the one of
// its path) and the paths gone names out, in walk order.
func overlaid(entries, set []Entry, gone map[string]bool) []Entry {
	setting := make(map[string]bool, len(set))
	for i := range set {
		setting[set[i].Path] = true
	}
	out := make([]Entry, 0, len(entries)+len(set))
	for _, e := range entries {
		if !gone[e.Path] && !setting[e.Path] {
			out = append(out, e)
		}
	}
	for _, e := range set {
		if !gone[e.Path] {
			out = append(out, e)
		}
	}
	SortEntries(out)
	return out
}
