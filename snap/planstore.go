package snap

import "slices"

// planStore is where a restore keeps its plan's operations and deletions
// once they are made, for the staging, the result and the changes to the
// tree to read back. A plan is held in memory (heldPlan) or, when it
// differs from the tree in too many entries to hold, written to files in
// the staging folder a block at a time (spilledPlan, see spill.go).
type planStore interface {
	// eachOp calls fn with each operation, in order, and its number (op
	// is fn's only for the call).
	eachOp(fn func(i int, op *restoreOp) error) error
	// eachDelete calls fn with each of the tree's entries deleted, in walk
	// order; inSnap tells whether the snapshot has its path (as another
	// kind), spelt as the tree spells it or, where names fold, otherwise:
	// then a folder is in the way of what the snapshot puts there, never
	// kept.
	eachDelete(fn func(d *Entry, inSnap bool) error) error
	// eachChange hands fn the plan's changes in path order, as a diff
	// lists them: each path it writes (modified, or deleted from the tree
	// where nothing was there), changes the mode of or respells, then each
	// it deletes that the snapshot does not have (added).
	eachChange(fn func(Change) error) error
	// counts is what the operations change, for the result.
	counts() *opCounts
	// takeDeleted hands the deletions' list over to the result, which
	// closes it.
	takeDeleted() deletions
	// close lets go of what the store holds.
	close()
}

// opCounts counts a plan's operations by what they change.
type opCounts struct {
	written int      // operations that write a file
	modes   int      // operations that change a file's mode
	folders int      // operations that make a folder or change its mode
	renamed []Rename // where names fold: the entries given the snapshot's spelling, for the result
}

func (c *opCounts) add(op *restoreOp) {
	switch {
	case op.kind == opMkdir || op.kind == opChmod && op.entry.Kind == KindDir:
		c.folders++
	case op.kind == opWrite:
		c.written++
	case op.kind == opChmod:
		c.modes++
	case op.kind == opRename:
		c.renamed = append(c.renamed, Rename{From: op.from, To: op.entry.Path})
	}
}

// heldPlan is a plan held in memory.
type heldPlan struct {
	ops     []restoreOp
	deletes []heldDelete // in the tree, not in the snapshot (or of another kind)
	n       opCounts
	deleted deletions // the list of deletes, for the result: made when taken
}

// heldDelete is a tree's entry the plan deletes.
type heldDelete struct {
	Entry
	inSnap bool // the snapshot has the path, however it spells it (as another kind); else a diff's added path
}

// newHeldPlan holds the plan's operations ops; deleted is the deletions'
// list to fill, as tuned.
func newHeldPlan(ops []restoreOp, deleted deletions) *heldPlan {
	h := &heldPlan{ops: ops, deleted: deleted}
	for i := range ops {
		h.n.add(&ops[i])
	}
	return h
}

func (h *heldPlan) eachOp(fn func(i int, op *restoreOp) error) error {
	for i := range h.ops {
		if err := fn(i, &h.ops[i]); err != nil {
			return err
		}
	}
	return nil
}

func (h *heldPlan) eachDelete(fn func(d *Entry, inSnap bool) error) error {
	for i := range h.deletes {
		d := &h.deletes[i]
		if err := fn(&d.Entry, d.inSnap); err != nil {
			return err
		}
	}
	return nil
}

func (h *heldPlan) eachChange(fn func(Change) error) error {
	out := opChanges(h.ops)
	for _, d := range h.deletes {
		if !d.inSnap { // (else a kind change, modified above)
			out = append(out, Change{Type: "change", Op: OpAdded, Path: d.Path, Kind: d.Kind.String()})
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int { return comparePaths(a.Path, b.Path) })
	for i := range out {
		if err := fn(out[i]); err != nil {
			return err
		}
	}
	return nil
}

func (h *heldPlan) counts() *opCounts { return &h.n }

func (h *heldPlan) takeDeleted() deletions {
	d := h.deleted
	for i := range h.deletes {
		d.add(&h.deletes[i].Entry)
	}
	return d
}

func (h *heldPlan) close() {}
