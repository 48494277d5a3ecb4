package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"rewind.dev/internal/layout"
	"rewind.dev/snap"
)

// gcIndexed is retention at a hook planned from the store's index (see
// index.go), so that what it reads before its first round does not grow
// with the store: the index proposes the oldest checkpoints the policy
// would delete; each round reads for real the ones it deletes, those that
// build on them (their manifest a delta over one of them, their transcript
// builds on one's bytes) and those they would be re-based over, and judges
// them by gc's rules — pinned, needed by undo-restore or redo
// (History.inReach), damaged (then nothing older goes), needed by a
// survivor whose files do not read. The policy counts as gc's does
// (policy.go): the index says which checkpoints are restore backups. Rounds
// go on while the budget lasts; the archives in layers/ only the deleted
// ones read are swept as they go. ids are the checkpoints' folders, sorted;
// idx lists exactly them.
func (s *Store) gcIndexed(ctx context.Context, o GCOptions, start time.Time, ids []string, idx map[string]*indexEntry) (*GCResult, error) {
	res := &GCResult{Type: "gc", Removed: []string{}}
	h, err := s.History()
	if err != nil {
		return nil, err
	}
	reach := h.inReach(o.undoReach())
	barrier := ""      // the newest damaged id: nothing older goes
	var items []gcItem // oldest first: those that read, as gc's are
	var total int64    // what the store holds, as gc counts it for max_bytes
	for _, id := range ids {
		e := idx[id]
		total += e.bytes
		if e.damaged {
			res.Damaged = append(res.Damaged, id)
			barrier = maxID(barrier, id)
			continue
		}
		items = append(items, gcItem{id: id, created: time.Unix(0, e.created), bytes: e.bytes, backup: e.backup})
	}
	for _, id := range res.Damaged {
		if u := s.notYours(id, false); u != nil {
			res.Unremovable = append(res.Unremovable, *u)
		}
	}
	// (a pinned one is known when its round reads it)
	cands, protected := o.judge(items, total, time.Now(), func(id string) bool { return reach[id] || CompareIDs(id, barrier) <= 0 })
	res.Protected = protected
	p := progressFrom(ctx)
	p.begin(len(cands))
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
		b := cands[:min(gcRound, len(cands))]
		cands = cands[len(b):]
		began := time.Now()
		stop, err := s.indexedRound(ctx, b, idx, reach, res, &swept)
		longest = max(longest, time.Since(began))
		p.add(len(b))
		if err == errStaleIndex {
			// What was read differs from what the index says: it is not
			// trusted again (the next run reads the store and writes it).
			res.Kept, res.KeptBackups = len(idx), backupsIn(idx)
			return res, s.dropIndex()
		}
		if err != nil {
			res.Kept, res.KeptBackups = len(idx), backupsIn(idx)
			return res, err
		}
		if stop {
			break
		}
	}
	s.writeIndex(idx)
	s.forgetVerified(res.Removed, swept)
	res.Kept, res.KeptBackups = len(idx), backupsIn(idx)
	slices.SortFunc(res.Protected, CompareIDs)
	slices.SortFunc(res.Unremovable, func(a, b Unremovable) int { return CompareIDs(a.ID, b.ID) })
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
func (s *Store) indexedRound(ctx context.Context, batch []string, idx map[string]*indexEntry, reach map[string]bool, res *GCResult, swept *[]string) (stop bool, err error) {
	g := &gcGraph{s: s, nodes: map[string]*gcNode{}, full: map[string]*snap.Manifest{}, fixed: map[string]bool{}}
	damaged := func(id string) (bool, error) {
		idx[id] = &indexEntry{damaged: true}
		res.Damaged = append(res.Damaged, id)
		slices.SortFunc(res.Damaged, CompareIDs)
		return true, nil
	}
	// read reads checkpoint id for real, as gc does, and holds it to its
	// line in the index.
	read := func(id string) (ok bool, err error) {
		if g.nodes[id] != nil || !isID(id) {
			return true, nil
		}
		e := idx[id]
		if e == nil {
			return false, errStaleIndex
		}
		c, err := s.Load(id)
		if err != nil {
			return false, nil
		}
		n, err := s.readNode(c)
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
		g.nodes[id] = n
		if u := s.notYours(id, true); u != nil {
			g.fixed[id] = true
			res.Unremovable = append(res.Unremovable, *u)
		}
		return true, nil
	}
	in := map[string]bool{}
	var plan []*Checkpoint
	for _, id := range batch {
		ok, err := read(id)
		if err != nil {
			return false, err
		}
		if !ok {
			return damaged(id)
		}
		if g.fixed[id] { // (listed as unremovable)
			continue
		}
		if c := g.nodes[id].c; c.Pinned != "" || reach[id] {
			res.Protected = append(res.Protected, id)
			continue
		}
		in[id] = true
	}
	// Those that build on the batch, and those the batch builds on.
	for id, e := range idx {
		if !in[id] && (in[e.parent] || in[e.base]) {
			ok, err := read(id)
			if err != nil {
				return false, err
			}
			if !ok {
				return damaged(id)
			}
		}
	}
	for _, id := range batch {
		if n := g.nodes[id]; n != nil && !in[n.parent] {
			ok, err := read(n.parent)
			if err != nil {
				return false, err
			}
			if !ok {
				return damaged(n.parent)
			}
		}
	}
	for _, id := range batch {
		if in[id] {
			plan = append(plan, g.nodes[id].c)
		}
	}
	for {
		more := g.unremovable(plan)
		if len(more) == 0 {
			break
		}
		plan = slices.DeleteFunc(plan, func(c *Checkpoint) bool {
			if slices.Contains(more, c.ID) {
				res.Protected = append(res.Protected, c.ID)
				return true
			}
			return false
		})
	}
	if len(plan) == 0 {
		return false, nil
	}
	var gone []string // the archives the deleted manifests named
	for _, c := range plan {
		gone = append(gone, g.nodes[c.ID].archives...)
	}
	for len(plan) > 0 {
		freed, err := s.removeBatch(ctx, g, plan)
		res.FreedBytes += freed
		for _, c := range plan {
			if g.nodes[c.ID] == nil { // removed
				res.Removed = append(res.Removed, c.ID)
				delete(idx, c.ID)
			}
		}
		for id, n := range g.nodes { // the survivors, re-based
			idx[id] = indexOf(n)
			*swept = append(*swept, n.c.Dir) // (a merged transcript's old link is gone)
		}
		left, ok := g.refused(err, plan, res)
		if !ok && err != nil {
			return false, err
		}
		plan = left // (the rest of the plan, less what the one refused builds on)
	}
	freed, gone := s.sweepGone(gone, idx)
	res.FreedBytes += freed
	*swept = append(*swept, gone...)
	return false, nil
}

// forgetVerified drops from the verified file what it says of the folders
// of the checkpoints removed, of files gone from the folders of survivors
// it rewrote, and of archives in layers/ gone with them, given in swept (gc
// prunes it by stat'ing every file it names, which grows with the store;
// a save reads it whole, so it must not grow with what retention deleted).
func (s *Store) forgetVerified(removed, swept []string) {
	if len(removed) == 0 {
		return
	}
	gone := map[string]bool{}
	for _, id := range removed {
		gone[id] = true
	}
	k := s.newChecker(context.Background(), false)
	touched := map[string]bool{} // survivors gc rewrote: their files still there stay
	for _, a := range swept {
		if key := k.key(a); strings.HasPrefix(key, layout.CheckpointsDir+"/") {
			touched[strings.TrimPrefix(key, layout.CheckpointsDir+"/")] = true
		} else if _, ok := k.files[key]; ok {
			delete(k.files, key)
			k.dirty = true
		}
	}
	for key := range k.files {
		rest, ok := strings.CutPrefix(key, layout.CheckpointsDir+"/")
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(rest, "/")
		if gone[id] || touched[id] && !exists(filepath.Join(s.Dir, filepath.FromSlash(key))) {
			delete(k.files, key)
			k.dirty = true
		}
	}
	k.save()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// sweepGone deletes the archives of layers/ among gone that no checkpoint
// in idx reads (see sweepLayers), none at or before a damaged one, and
// returns the bytes freed and the archives deleted.
func (s *Store) sweepGone(gone []string, idx map[string]*indexEntry) (int64, []string) {
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
		if !ok || !isID(id) || CompareIDs(id, barrier) <= 0 || used[a] || filepath.Dir(a) != s.layersDir() {
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
