package gitindex

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"
)

// Paths is a sorted list of paths held front-coded in one slice: each
// path as the length of the start it shares with the one before, then the
// rest (uvarints, then bytes), every pathBlock-th in full, where a search
// starts. A git index's paths share most of their bytes with the one
// before: a million cost 7.5 MB so, 28 MB as plain bytes and an end each
// — held through every walk of a repository's tree.
type Paths struct {
	blob   []byte
	blocks []uint32 // where each block of pathBlock paths starts in blob
}

const pathBlock = 16

// first decodes into buf the first path not before s, and returns it; nil
// where there is none.
func (l *Paths) first(s string, buf []byte) []byte {
	if len(l.blocks) == 0 {
		return nil
	}
	// The last block that starts at or before s (or the first).
	b := max(sort.Search(len(l.blocks), func(i int) bool { return string(l.blockFirst(i)) > s })-1, 0)
	end := len(l.blob)
	if b+1 < len(l.blocks) {
		end = int(l.blocks[b+1])
	}
	for off := int(l.blocks[b]); off < end; {
		shared, rest, next := l.at(off)
		buf = append(buf[:shared], rest...)
		off = next
		if string(buf) >= s {
			return buf
		}
	}
	if b+1 < len(l.blocks) {
		return append(buf[:0], l.blockFirst(b+1)...)
	}
	return nil
}

// at decodes the path written at off: how much of the one before it
// shares, the rest, and where the next starts.
func (l *Paths) at(off int) (shared int, rest []byte, next int) {
	sh, n := binary.Uvarint(l.blob[off:])
	off += n
	size, n := binary.Uvarint(l.blob[off:])
	off += n
	return int(sh), l.blob[off : off+int(size)], off + int(size)
}

// blockFirst is the path block i starts with (written in full).
func (l *Paths) blockFirst(i int) []byte {
	_, rest, _ := l.at(int(l.blocks[i]))
	return rest
}

// Has reports whether path is in the list.
func (l *Paths) Has(path string) bool {
	var buf [256]byte
	p := l.first(path, buf[:0])
	return p != nil && string(p) == path
}

// AnyUnder reports whether any path of the list lies inside folder dir.
func (l *Paths) AnyUnder(dir string) bool {
	dir += "/"
	var buf [256]byte
	p := l.first(dir, buf[:0])
	return len(p) >= len(dir) && string(p[:len(dir)]) == dir
}

// pathsBuilder keeps the paths under prefix, relative to it, sorted and
// without repeats (an unmerged path has several stages).
type pathsBuilder struct {
	prefix string
	blob   []byte
	blocks []uint32
	n      int      // paths written
	last   []byte   // the last path written
	sorted []string // when the paths come out of order: all of them, to sort at the end
}

// sizeFor makes room at once for the block starts of n paths.
func (b *pathsBuilder) sizeFor(n int) {
	b.blocks = make([]uint32, 0, n/pathBlock+1)
}

func (b *pathsBuilder) add(p []byte) {
	if b.prefix != "" {
		rest, ok := bytes.CutPrefix(p, []byte(b.prefix+"/"))
		if !ok {
			return
		}
		p = rest
	}
	if b.sorted != nil {
		b.sorted = append(b.sorted, string(p))
		return
	}
	if b.n > 0 {
		switch c := bytes.Compare(p, b.last); {
		case c == 0:
			return
		case c < 0: // git keeps its index sorted; an index that is not is sorted here
			l := b.list()
			var buf []byte
			for q := l.first("", nil); q != nil; q = l.first(string(q)+"\x00", buf) {
				b.sorted = append(b.sorted, string(q))
				buf = q
			}
			b.sorted = append(b.sorted, string(p))
			return
		}
	}
	b.write(p)
}

// write adds p, after every path written.
func (b *pathsBuilder) write(p []byte) {
	shared := 0
	if b.n%pathBlock == 0 {
		b.blocks = append(b.blocks, uint32(len(b.blob)))
	} else {
		for shared < len(p) && shared < len(b.last) && p[shared] == b.last[shared] {
			shared++
		}
	}
	b.blob = binary.AppendUvarint(b.blob, uint64(shared))
	b.blob = binary.AppendUvarint(b.blob, uint64(len(p)-shared))
	b.blob = append(b.blob, p[shared:]...)
	b.last = append(b.last[:0], p...)
	b.n++
}

// list is what is written so far, sharing the builder's bytes.
func (b *pathsBuilder) list() *Paths {
	return &Paths{blob: b.blob, blocks: b.blocks}
}

func (b *pathsBuilder) done() *Paths {
	if b.sorted != nil {
		sort.Strings(b.sorted)
		b.sorted = slices.Compact(b.sorted)
		b.blob, b.blocks, b.n = nil, b.blocks[:0], 0
		for _, p := range b.sorted {
			b.write([]byte(p))
		}
		b.sorted = nil
	}
	if cap(b.blob) > len(b.blob)+len(b.blob)/4+4096 { // (grown by doubling, or most of the index lies outside the prefix)
		b.blob, b.blocks = bytes.Clone(b.blob), slices.Clone(b.blocks)
	}
	return b.list()
}
