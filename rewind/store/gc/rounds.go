package gc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"rewind.dev/internal/progress"
	"rewind.dev/rewind/store/record"
	"rewind.dev/rewind/store/retention"
	"rewind.dev/rewind/store/verify"
	"rewind.dev/snap"
)

// fromIndex is retention at a hook planned from the store's index (see
// index.go), so that what it reads before its first round does not grow
// with the store: the index proposes the oldest checkpoints the policy
// would delete; each round reads for real the ones it deletes, those that
// build on them (their manifest a delta over one of them, their transcript
// builds on one's bytes) and those they would be re-based over, and judges
// them by gc's rules — pinned, needed by undo-restore or redo
// (Store.InReach), damaged (then nothing older goes), needed by a
// survivor whose files do not read. The policy counts as gc's does
// (package retention): the index says which checkpoints are restore
// backups. Rounds go on while the budget lasts; the archives in layers/
// only the deleted ones read are swept as they go. ids are the
// checkpoints' folders, sorted; idx lists exactly them.
func (st Store) fromIndex(ctx context.Context, o Options, start time.Time, ids []string, idx map[string]*indexEntry) (*Result, error) {
	res := &Result{Type: "gc", Removed: []string{}}
	reach, err := st.InReach(o.UndoReach)
	if err != nil {
		return nil, err
	}
	barrier := ""              // the newest damaged id: nothing older goes
	var items []retention.Item // oldest first: those that read, as gc's are
	var total int64            // what the store holds, as gc counts it for max_bytes
	for _, id := range ids {
		e := idx[id]
		total += e.bytes
		if e.damaged {
			res.Damaged = append(res.Damaged, id)
			barrier = maxID(barrier, id)
			continue
		}
		items = append(items, retention.Item{ID: id, Created: time.Unix(0, e.created), Bytes: e.bytes, Backup: e.backup})
	}
	for _, id := range res.Damaged {
		if u := st.NotYours(id, false); u != nil {
			res.Unremovable = append(res.Unremovable, *u)
		}
	}
	// (a pinned one is known when its round reads it)
	cands, protected := o.policy().Judge(items, total, time.Now(), func(id string) bool { return reach[id] || record.CompareIDs(id, barrier) <= 0 })
	res.Protected = protected
	p := progress.From(ctx, progress.Checkpoints)
	p.Begin()
	p.Expect(int64(len(cands)), 0)
	var swept []string        // archives of layers/ deleted
	var longest time.Duration // the longest round yet: one is not started unless it fits (roundFits)
	for first := true; len(cands) > 0; first = false {
		if !first && !roundFits(start, longest, o.Budget) {
			res.Partial = true
			break
		}
		if ctx.Err() != nil {
			break
		}
		b := cands[:min(o.round(), len(cands))]
		cands = cands[len(b):]
		began := time.Now()
		stop, err := st.indexedRound(ctx, b, idx, reach, res, &swept)
		longest = max(longest, time.Since(began))
		p.Add(int64(len(b)), 0)
		if err == errStaleIndex {
			// What was read differs from what the index says: it is not
			// trusted again (the next run reads the store and writes it).
			res.Kept, res.KeptBackups = len(idx), backupsIn(idx)
			return res, st.dropIndex()
		}
		if err != nil {
			res.Kept, res.KeptBackups = len(idx), backupsIn(idx)
			return res, err
		}
		if stop {
			break
		}
	}
	st.writeIndex(idx)
	verify.Forget(st.Store, res.Removed, swept)
	res.Kept, res.KeptBackups = len(idx), backupsIn(idx)
	slices.SortFunc(res.Protected, record.CompareIDs)
	slices.SortFunc(res.Unremovable, func(a, b Unremovable) int { return record.CompareIDs(a.ID, b.ID) })
	res.Unremovable = slices.CompactFunc(res.Unremovable, func(a, b Unremovable) bool { return a.ID == b.ID }) // (read in more than one round)
	return res, ctx.Err()
}

// backupsIn counts the restore backups idx lists.
func backupsIn(idx map[string]*indexEntry) int {
	n := 0
	for _, e := range idx {
		if e.backup {
			n++
		}
	}
	return n
}

// errStaleIndex is a checkpoint read for real that differs from its line in
// the index.
var errStaleIndex = errors.New("the store's index is stale")

// indexedRound deletes what it may of batch (ids, oldest first) and keeps
// idx up to date; stop says a damaged checkpoint was found (nothing older
// than it goes: retention stops, and gc reads the whole store).
func (st Store) indexedRound(ctx context.Context, batch []string, idx map[string]*indexEntry, reach map[string]bool, res *Result, swept *[]string) (stop bool, err error) {
	r := &indexRound{st: st, idx: idx, res: res,
		g: &graph{st: st, nodes: map[string]*node{}, full: map[string]*snap.Manifest{}, fixed: map[string]bool{}}}
	plan, bad, err := r.plan(batch, reach)
	if err != nil || bad != "" {
		if bad != "" {
			r.damaged(bad)
		}
		return bad != "", err
	}
	if len(plan) == 0 {
		return false, nil
	}
	return false, r.remove(ctx, plan, swept)
}

// indexRound is one round of retention planned from the store's index: the checkpoints it
// touches are read for real, as gc reads them, and held to their lines in the index.
type indexRound struct {
	st  Store
	idx map[string]*indexEntry
	res *Result
	g   *graph // the checkpoints read so far
}

// damaged records that checkpoint id cannot be read.
func (r *indexRound) damaged(id string) {
	r.idx[id] = &indexEntry{damaged: true}
	r.res.Damaged = append(r.res.Damaged, id)
	slices.SortFunc(r.res.Damaged, record.CompareIDs)
}

// read reads checkpoint id for real, as gc does, and holds it to its line in the index: ok is
// false when it cannot be read, errStaleIndex when it differs from its line.
func (r *indexRound) read(id string) (ok bool, err error) {
	if r.g.nodes[id] != nil || !record.IsID(id) {
		return true, nil
	}
	e := r.idx[id]
	if e == nil {
		return false, errStaleIndex
	}
	c, err := r.st.Load(id)
	if err != nil {
		return false, nil
	}
	n, err := r.st.readNode(c)
	if err != nil {
		return false, nil
	}
	base := ""
	if c.Transcript != nil {
		base = c.Transcript.Base
	}
	if e.damaged || e.created != c.CreatedAt.UnixNano() || e.backup != c.Backup() || e.bytes != dirBytes(c.Dir, false) || e.parent != n.parent || e.base != base || !slices.Equal(e.archives, n.archives) {
		return false, errStaleIndex
	}
	r.g.nodes[id] = n
	if u := r.st.NotYours(id, true); u != nil {
		r.g.fixed[id] = true
		r.res.Unremovable = append(r.res.Unremovable, *u)
	}
	return true, nil
}

// plan reads batch and what it touches (the checkpoints that build on it and those it builds
// on) and returns what of it may go, oldest first. bad names a checkpoint that could not be
// read: then nothing goes.
func (r *indexRound) plan(batch []string, reach map[string]bool) (plan []*record.Checkpoint, bad string, err error) {
	readAll := func(ids ...string) (string, error) {
		for _, id := range ids {
			ok, err := r.read(id)
			if err != nil {
				return "", err
			}
			if !ok {
				return id, nil
			}
		}
		return "", nil
	}
	in := map[string]bool{}
	for _, id := range batch {
		if bad, err := readAll(id); bad != "" || err != nil {
			return nil, bad, err
		}
		if r.g.fixed[id] { // (listed as unremovable)
			continue
		}
		if c := r.g.nodes[id].c; c.Pinned != "" || reach[id] {
			r.res.Protected = append(r.res.Protected, id)
			continue
		}
		in[id] = true
	}
	// Those that build on the batch, and those the batch builds on.
	for id, e := range r.idx {
		if !in[id] && (in[e.parent] || in[e.base]) {
			if bad, err := readAll(id); bad != "" || err != nil {
				return nil, bad, err
			}
		}
	}
	for _, id := range batch {
		if n := r.g.nodes[id]; n != nil && !in[n.parent] {
			if bad, err := readAll(n.parent); bad != "" || err != nil {
				return nil, bad, err
			}
		}
	}
	for _, id := range batch {
		if in[id] {
			plan = append(plan, r.g.nodes[id].c)
		}
	}
	for {
		more := r.g.unremovable(plan)
		if len(more) == 0 {
			return plan, "", nil
		}
		plan = slices.DeleteFunc(plan, func(c *record.Checkpoint) bool {
			if slices.Contains(more, c.ID) {
				r.res.Protected = append(r.res.Protected, c.ID)
				return true
			}
			return false
		})
	}
}

// remove deletes plan, keeps the index up to date with the survivors it re-based, and sweeps
// the archives no manifest names any more; swept gets the folders whose files changed.
func (r *indexRound) remove(ctx context.Context, plan []*record.Checkpoint, swept *[]string) error {
	g, res := r.g, r.res
	var gone []string // the archives the deleted manifests named
	for _, c := range plan {
		gone = append(gone, g.nodes[c.ID].archives...)
	}
	for len(plan) > 0 {
		freed, err := r.st.removeBatch(ctx, g, plan)
		res.FreedBytes += freed
		for _, c := range plan {
			if g.nodes[c.ID] == nil { // removed
				res.Removed = append(res.Removed, c.ID)
				delete(r.idx, c.ID)
			}
		}
		for id, n := range g.nodes { // the survivors, re-based
			r.idx[id] = indexOf(n)
			*swept = append(*swept, n.c.Dir) // (a merged transcript's old link is gone)
		}
		left, ok := g.refused(err, plan, res)
		if !ok && err != nil {
			return err
		}
		plan = left // (the rest of the plan, less what the one refused builds on)
	}
	freed, sweptGone := r.st.sweepGone(gone, r.idx)
	res.FreedBytes += freed
	*swept = append(*swept, sweptGone...)
	return nil
}

// sweepGone deletes the archives of layers/ among gone that no checkpoint
// in idx reads (see sweepLayers), none at or before a damaged one, and
// returns the bytes freed and the archives deleted.
func (st Store) sweepGone(gone []string, idx map[string]*indexEntry) (int64, []string) {
	barrier := ""
	used := map[string]bool{}
	for id, e := range idx {
		if e.damaged {
			barrier = maxID(barrier, id)
		}
		for _, a := range e.archives {
			used[a] = true
		}
	}
	var freed int64
	var deleted []string
	for _, a := range gone {
		id, ok := strings.CutSuffix(filepath.Base(a), ".tar.gz")
		if !ok || !record.IsID(id) || record.CompareIDs(id, barrier) <= 0 || used[a] || filepath.Dir(a) != st.layersDir() {
			continue
		}
		if fi, err := os.Stat(a); err == nil && os.Remove(a) == nil {
			freed += fi.Size()
			deleted = append(deleted, a)
		}
		used[a] = true // (named twice)
	}
	return freed, deleted
}
