package snap

import (
	"strings"
	"unsafe"
)

// A recall is what inherit's pass over a parent manifest read as it goes
// (OpenManifest) learned about the fresh entries it went through: which of
// them differ from the parent's (in any field a manifest records, or new),
// and a copy of the parent's entries that differ or are gone. Every other
// fresh entry equals the parent's. The passes that follow over the same two
// — the layer's plan, its delta's lines, the count of changes — merge the
// recall instead of reading the tree's worth of parent again: on a tree
// with one change that is three reads of a manifest of a line per file
// saved.
//
// It holds for the list inherit went through as long as only the entries
// it lists as differing change, and entries are only dropped: the layer's
// archive writes and updates no others.
type recall struct {
	first   *Entry   // the array of the list it is of: a recall of one list is not used for another
	differs []string // paths of the fresh entries that differ, in walk order
	old     []Entry  // the parent's entries that differ or are gone, in walk order, copied
	full    bool     // too much differs to be worth holding: passes read the parent again
	whole   bool     // never full: the list is a save's sparse one (see sparseSave), the only record of what differs
	most    int      // the entries it holds at most, unless whole (recallMax)
}

// recallMax bounds the entries a recall holds (about 250 bytes each): past
// it, the changes are many and reading the parent again is the lesser cost.
const recallMax = 1 << 14

// note records the pair inherit's pass met: the parent's entry p and the
// fresh e (either nil when absent), once e is settled.
func (r *recall) note(p, e *Entry) {
	if r.full || (p != nil && e != nil && e.same(p)) {
		return
	}
	if e != nil {
		r.differs = append(r.differs, e.Path)
	}
	if p != nil {
		o := *p // (read as the pass goes: its strings are copied; Src is the stream's own)
		o.Path, o.Hash, o.Link = strings.Clone(p.Path), strings.Clone(p.Hash), strings.Clone(p.Link)
		r.old = append(r.old, o)
	}
	if len(r.differs)+len(r.old) > r.most && !r.whole {
		r.full, r.differs, r.old = true, nil, nil
	}
}

// of reports whether r recalls the list cur (a sparse one may be empty,
// its array not).
func (r *recall) of(cur []Entry) bool {
	return r != nil && !r.full && r.first != nil && unsafe.SliceData(cur) == r.first
}

// merge is mergeWith over the parent r recalls and cur.
func (r *recall) merge(cur []Entry, fn func(old, cur *Entry) error) error {
	k, d := 0, 0
	var same Entry // the parent's entry of a path that did not change: cur's, copied
	for j := range cur {
		c := &cur[j]
		for k < len(r.old) && comparePaths(r.old[k].Path, c.Path) < 0 {
			if err := fn(&r.old[k], nil); err != nil {
				return err
			}
			k++
		}
		for d < len(r.differs) && comparePaths(r.differs[d], c.Path) < 0 {
			d++ // (an entry the archive dropped)
		}
		if d < len(r.differs) && r.differs[d] == c.Path {
			d++
			var o *Entry
			if k < len(r.old) && r.old[k].Path == c.Path {
				o = &r.old[k]
				k++
			}
			if err := fn(o, c); err != nil {
				return err
			}
			continue
		}
		same = *c
		if err := fn(&same, c); err != nil {
			return err
		}
	}
	for ; k < len(r.old); k++ {
		if err := fn(&r.old[k], nil); err != nil {
			return err
		}
	}
	return nil
}
