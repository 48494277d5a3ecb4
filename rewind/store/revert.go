package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"rewind.dev/hookd"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/merge"
	"rewind.dev/rewind/store/verify"
	"rewind.dev/snap"
)

// A revert takes back one step — the changes from a checkpoint to the one
// ending its step — and keeps every change made since, as git revert does:
// per path a three-way merge of the state after the step (the base), the
// tree now (ours) and the state at the checkpoint (theirs). A path the
// step did not touch is left alone; one nothing changed since the step is
// put back as it was at the checkpoint (a file the step added is removed,
// one it deleted comes back); one changed both by the step and since is
// merged line by line when it is text in all three, and conflicts
// otherwise. It goes through the crash-safe sequence (change.go), so
// undo-restore reverts it.

// RevertOptions say which step a revert takes back, and how.
type RevertOptions struct {
	// To ends the step; nil for the checkpoint StepEnd finds.
	To *Checkpoint
	// Markers writes git-style conflict markers into the text files that
	// conflict (and leaves the other conflicting paths as they are), where
	// by default a revert with conflicts changes nothing.
	Markers bool
	DryRun  bool
}

// RevertResult is what a revert did, or in a dry run would do.
type RevertResult struct {
	Type       string      `json:"type"`       // "restore"
	Kind       RestoreKind `json:"kind"`       // KindRevert
	Checkpoint string      `json:"checkpoint"` // the checkpoint the step starts at
	TreeChange
	// Plan is what the revert takes back, path by path.
	Plan     *RevertPlan `json:"revert,omitempty"`
	Warnings []string    `json:"warnings,omitempty"`
}

// RevertPlan is what a revert takes back and how, path by path.
type RevertPlan struct {
	From string `json:"from"` // the checkpoint the step starts at: paths go back to it
	// To is the checkpoint the step ends at; "" when it runs to the tree
	// now (From is the newest checkpoint).
	To        string       `json:"to,omitempty"`
	Prompt    string       `json:"prompt,omitempty"` // the prompt From was taken at, if any
	Paths     []RevertPath `json:"paths"`            // every path the step changed
	Conflicts int          `json:"conflicts"`        // paths that conflict
	Markers   bool         `json:"markers"`          // conflicts get markers (--conflicts=markers)
}

// RevertPath is one path the step changed, and what the revert does to it.
type RevertPath struct {
	Path   string       `json:"path"`
	Kind   string       `json:"kind"` // file, dir, symlink
	Step   snap.Op      `json:"step"` // what the step did to it: added, deleted, modified, mode
	Action RevertAction `json:"action"`
	// Reason says why a path conflicts; Regions counts a text file's
	// conflicting regions.
	Reason  string `json:"reason,omitempty"`
	Regions int    `json:"regions,omitempty"`
}

// RevertAction is what a revert does to a path the step changed.
type RevertAction string

const (
	ActionRevert   RevertAction = "revert"   // nothing changed it since: back as it was at the checkpoint
	ActionMerge    RevertAction = "merge"    // changed since too: the step's change taken out, the later ones kept
	ActionAlready  RevertAction = "already"  // the tree already has it as it was at the checkpoint
	ActionKept     RevertAction = "kept"     // left as it is (a folder that holds later files)
	ActionConflict RevertAction = "conflict" // the step's change and later ones collide: left as it is
	ActionMarkers  RevertAction = "markers"  // a conflicting text file, written with conflict markers
)

// ConflictError is a revert that conflicts and so changed nothing (without
// Markers), or that wrote conflict markers (Markers) to resolve.
type ConflictError struct {
	Checkpoint string
	Paths      []string // the conflicting paths
	Markers    bool
}

func (e *ConflictError) Error() string {
	list := strings.Join(e.Paths[:min(len(e.Paths), 5)], ", ")
	if len(e.Paths) > 5 {
		list += fmt.Sprintf(" and %d more", len(e.Paths)-5)
	}
	if e.Markers {
		return fmt.Sprintf("revert of %s left conflicts in %d %s: %s", e.Checkpoint, len(e.Paths), plural(len(e.Paths), "path"), list)
	}
	return fmt.Sprintf("revert of %s conflicts with later changes in %d %s (%s); nothing was changed", e.Checkpoint, len(e.Paths), plural(len(e.Paths), "path"), list)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// mergeLimit is the largest file merged line by line; a larger one changed
// both by the step and since conflicts.
const mergeLimit = 16 << 20

// StepEnd is the checkpoint that ends cp's step: the next one list shows —
// or, when cp was taken at a prompt, the next one not taken inside that
// prompt (before or after a tool, before a compaction), so that the step is
// all the prompt did. nil when none came after cp: the step runs to the
// tree now. A restore's backup never ends a step: list does not show it,
// and it holds the tree a restore replaced, not a step the user took, so
// the same rows of list make the same steps whatever was restored between
// them.
func (s *Store) StepEnd(cp *Checkpoint) (*Checkpoint, error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	atPrompt := cp.Trigger.Kind == TriggerHook && cp.Trigger.Event == hookd.EventPrompt
	for _, id := range ids {
		if CompareIDs(id, cp.ID) <= 0 {
			continue
		}
		c, err := s.Load(id)
		if err != nil || c.Backup() {
			continue // damaged ('validate' names it), or a restore's backup
		}
		if atPrompt && c.Trigger.Kind == TriggerHook {
			switch c.Trigger.Event {
			case hookd.EventPreTool, hookd.EventPostTool, hookd.EventPreCompact:
				continue
			}
		}
		return c, nil
	}
	return nil, nil
}

// Revert takes back the step from cp (to o.To, or StepEnd's), keeping
// every change made since. With conflicts and without o.Markers nothing
// changes, and the error is a *ConflictError; the result says what
// conflicts either way.
func (s *Store) Revert(ctx context.Context, cp *Checkpoint, o RevertOptions) (*RevertResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	to := o.To
	if to == nil {
		if to, err = s.StepEnd(cp); err != nil {
			return nil, err
		}
	}
	if to != nil && CompareIDs(to.ID, cp.ID) <= 0 {
		return nil, fmt.Errorf("the step to revert runs forward in time: %s is not older than %s", cp.ID, to.ID)
	}
	k := s.newChecker(ctx)
	defer k.Save()
	before, after, err := stepEnds(k, cp, to)
	if err != nil {
		return nil, err
	}
	walk, err := s.walkOptions()
	if err != nil {
		return nil, err
	}
	// First from the tree as it is: a dry run, or the check that it merges.
	now, err := s.treeNow(ctx, before, after, walk)
	if err != nil {
		return nil, err
	}
	res := &RevertResult{Type: "restore", Kind: KindRevert, Checkpoint: cp.ID, TreeChange: TreeChange{DryRun: o.DryRun}}
	p, err := planRevert(ctx, before, after, now, cp, to, o.Markers)
	if err != nil {
		return nil, err
	}
	res.Plan = &p.RevertPlan
	if p.Conflicts > 0 && !o.Markers {
		return res, p.conflictError(cp.ID)
	}
	if o.DryRun || !p.writes() {
		return res, nil // a step already taken back takes no backup
	}
	var cleanup func()
	defer func() {
		if cleanup != nil {
			cleanup()
		}
	}()
	c := change{
		backup: SaveOptions{Description: "before revert of " + cp.ID, UseSession: true,
			TranscriptPath: transcriptOf(cp), TranscriptBestEffort: true},
		entry: HistoryEntry{Kind: KindRevert, Checkpoint: cp.ID, Code: true},
		treeFrom: func(backup *Checkpoint) (*snap.RestoreResult, error) {
			// Again from the backup, which is what undo-restore brings
			// back: the tree may have changed since the first plan.
			bm, err := readManifest(backup)
			if err != nil {
				return nil, err
			}
			ours := manifestState(bm)
			st := stateOf{ours: ours, base: ours}
			if after != nil {
				st.base = manifestState(after)
			} else {
				if st.steps, err = snap.Diff(ctx, snap.DiffOptions{From: before, To: bm}); err != nil { // by path, as the merge compares
					return nil, err
				}
			}
			if p, err = planRevert(ctx, before, after, st, cp, to, o.Markers); err != nil {
				return nil, err
			}
			res.Plan = &p.RevertPlan
			if p.Conflicts > 0 && !o.Markers {
				return nil, p.conflictError(cp.ID)
			}
			m, done, err := s.composeRevert(ctx, bm, p)
			cleanup = done
			if err != nil {
				return nil, err
			}
			return snap.Restore(ctx, s.Project, "", snap.RestoreOptions{Manifest: m, Walk: walk}.WithSpillAt(s.spillAt))
		},
	}
	res, err = applied(res, &res.TreeChange, s.apply(ctx, k, c, &res.TreeChange, &res.Warnings))
	if err == nil && p.Conflicts > 0 {
		err = p.conflictError(cp.ID)
	}
	return res, err
}

// stepEnds checks and reads the trees at the two ends of the step Revert
// takes back: cp's, and to's (nil when to is nil: the step ends at the
// tree as it is now).
func stepEnds(k *verify.Checker, cp, to *Checkpoint) (before, after *snap.Manifest, err error) {
	for _, c := range []*Checkpoint{cp, to} {
		if c == nil {
			continue
		}
		if err := k.Check(c, verify.Code); err != nil {
			return nil, nil, &DamagedError{Err: err}
		}
	}
	if before, err = readManifest(cp); err != nil {
		return nil, nil, err
	}
	if to != nil {
		if after, err = readManifest(to); err != nil {
			return nil, nil, err
		}
	}
	return before, after, nil
}

// readManifest opens c's manifest: a revert looks at the few paths the
// step changed, found in a pass, not the tree held.
func readManifest(c *Checkpoint) (*snap.Manifest, error) {
	m, err := snap.OpenManifest(c.ManifestPath())
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", c.ID, err)
	}
	return m, nil
}

// state is a tree's entries by path, and the content of its files.
type state interface {
	// prepare readies the state for the paths steps changed, the only
	// ones entry is asked of.
	prepare(steps []snap.Change) error
	entry(p string) *snap.Entry // nil when absent
	// read returns the content of the files ps name (nil for one larger
	// than mergeLimit).
	read(ps []string) (map[string][]byte, error)
}

// stateOf is the two states a revert merges with the state before the
// step: ours (the tree now) and base (the state after the step). When the
// step runs to the tree now, base is ours and steps are its changes since
// the checkpoint.
type stateOf struct {
	ours, base state
	steps      []snap.Change
}

// mstate is the state a snapshot holds: the entries of the paths the step
// changed, found in one pass over its manifest (prepare), which is not
// held, and of each of those paths whether the snapshot holds a path below
// it that the step did not change (which a revert keeps).
type mstate struct {
	m      *snap.Manifest
	byPath map[string]*snap.Entry
	below  map[string]bool
}

func manifestState(m *snap.Manifest) *mstate { return &mstate{m: m} }

func (st *mstate) prepare(steps []snap.Change) error {
	if st.byPath != nil {
		return nil // (ours and base may be one)
	}
	index := make(map[string]int, len(steps))
	folders := false
	for i, c := range steps {
		index[c.Path] = i
		folders = folders || c.Kind == "dir"
	}
	below := make([]bool, len(steps))
	picked, err := st.m.Pick(func(p string) bool {
		if _, ok := index[p]; ok {
			return true
		}
		for d := path.Dir(p); folders && d != "."; d = path.Dir(d) {
			if i, ok := index[d]; ok {
				below[i] = true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	st.byPath, st.below = make(map[string]*snap.Entry, len(picked)), map[string]bool{}
	for i := range picked {
		st.byPath[picked[i].Path] = &picked[i]
	}
	for i, b := range below {
		if b {
			st.below[steps[i].Path] = true
		}
	}
	return nil
}

func (st *mstate) entry(p string) *snap.Entry { return st.byPath[p] }

func (st *mstate) read(ps []string) (map[string][]byte, error) {
	want := map[string]bool{}
	for _, p := range ps {
		want[p] = true
	}
	out := map[string][]byte{}
	err := snap.ReadFiles(st.m, func(p string) bool { return want[p] }, mergeLimit, func(p string, data []byte) error {
		out[p] = data
		return nil
	})
	return out, err
}

// diskState is the tree at root: the paths in changed are read from it,
// the others are as in unchanged.
type diskState struct {
	root      string
	changed   map[string]bool
	unchanged state
}

func (st *diskState) prepare(steps []snap.Change) error { return st.unchanged.prepare(steps) }

func (st *diskState) entry(p string) *snap.Entry {
	if !st.changed[p] {
		return st.unchanged.entry(p)
	}
	name := filepath.Join(st.root, filepath.FromSlash(p))
	fi, err := os.Lstat(name)
	if err != nil {
		return nil
	}
	e := &snap.Entry{Path: p, Mode: fi.Mode().Perm(), Size: fi.Size()}
	switch {
	case fi.Mode().IsRegular():
		e.Kind = snap.KindFile
		b, err := os.ReadFile(name)
		if err != nil {
			e.Hash = "unreadable"
			return e
		}
		sum := sha256.Sum256(b)
		e.Hash = hex.EncodeToString(sum[:])
	case fi.IsDir():
		e.Kind = snap.KindDir
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Kind = snap.KindSymlink
		e.Link, _ = os.Readlink(name)
	default:
		return nil
	}
	return e
}

func (st *diskState) read(ps []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	var rest []string
	for _, p := range ps {
		if !st.changed[p] {
			rest = append(rest, p)
			continue
		}
		b, err := os.ReadFile(filepath.Join(st.root, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		if len(b) > mergeLimit {
			b = nil
		}
		out[p] = b
	}
	more, err := st.unchanged.read(rest)
	for p, b := range more {
		out[p] = b
	}
	return out, err
}

// treeNow is the tree as it is, with the state after the step (after; nil
// for the tree itself) as its base.
func (s *Store) treeNow(ctx context.Context, before, after *snap.Manifest, walk snap.WalkOptions) (stateOf, error) {
	ref := after
	if ref == nil {
		ref = before
	}
	changes, err := snap.Diff(ctx, snap.DiffOptions{From: ref, Root: s.Project, Walk: walk})
	if err != nil {
		return stateOf{}, err
	}
	d := &diskState{root: s.Project, changed: map[string]bool{}, unchanged: manifestState(ref)}
	for _, c := range changes {
		d.changed[c.Path] = true
	}
	if after == nil {
		return stateOf{ours: d, base: d, steps: changes}, nil
	}
	return stateOf{ours: d, base: manifestState(after)}, nil
}

// revertPlan is a RevertPlan with what it writes: for each path it
// changes, the entry it gets (nil: removed), or merged content.
type revertPlan struct {
	RevertPlan
	result  map[string]*snap.Entry
	content map[string][]byte // merged text, by path; result holds its mode
	index   map[string]int    // Paths by path
}

// writes reports whether the plan changes the tree.
func (p *revertPlan) writes() bool { return len(p.result) > 0 || len(p.content) > 0 }

func (p *revertPlan) conflictError(cp string) error {
	e := &ConflictError{Checkpoint: cp, Markers: p.Markers}
	for _, rp := range p.Paths {
		if rp.Action == ActionConflict || rp.Action == ActionMarkers {
			e.Paths = append(e.Paths, rp.Path)
		}
	}
	return e
}

// planRevert decides, for every path that changed from before to after
// (the tree now, in now, when after is nil), what the revert does.
func planRevert(ctx context.Context, before, after *snap.Manifest, now stateOf, cp, to *Checkpoint, markers bool) (*revertPlan, error) {
	p := &revertPlan{RevertPlan: RevertPlan{From: cp.ID, Markers: markers, Paths: []RevertPath{}},
		result: map[string]*snap.Entry{}, content: map[string][]byte{}}
	if to != nil {
		p.To = to.ID
	}
	if cp.Trigger.Event == hookd.EventPrompt {
		p.Prompt = cp.Trigger.Prompt
	}
	theirs := manifestState(before)
	steps := now.steps
	if after != nil {
		var err error
		if steps, err = snap.Diff(ctx, snap.DiffOptions{From: before, To: after}); err != nil {
			return p, err
		}
	}
	for _, st := range []state{theirs, now.base, now.ours} {
		if err := st.prepare(steps); err != nil {
			return nil, err
		}
	}
	var toMerge []int // indexes in p.Paths of text merges to make
	for _, c := range steps {
		t, b, o := theirs.entry(c.Path), now.base.entry(c.Path), now.ours.entry(c.Path)
		rp := RevertPath{Path: c.Path, Kind: c.Kind, Step: c.Op}
		if rp.Kind == "" && b != nil {
			rp.Kind = b.Kind.String()
		}
		switch {
		case sameEntry(o, t):
			rp.Action = ActionAlready
		case sameEntry(o, b):
			rp.Action = ActionRevert
			p.result[c.Path] = t
		case t != nil && b != nil && o != nil && t.Kind == b.Kind && b.Kind == o.Kind && o.Kind != snap.KindSymlink:
			mode, ok := merge3(b.Mode, o.Mode, t.Mode)
			switch {
			case !ok:
				rp.Action, rp.Reason = ActionConflict, fmt.Sprintf("its mode was changed by the step (%s to %s) and since (to %s)", t.Mode, b.Mode, o.Mode)
			case o.Kind == snap.KindDir:
				rp.Action = ActionMerge
				p.result[c.Path] = withMode(o, mode)
			case o.Hash == b.Hash:
				rp.Action = ActionMerge
				p.result[c.Path] = withMode(t, mode)
			case o.Hash == t.Hash:
				rp.Action = ActionMerge
				p.result[c.Path] = withMode(o, mode)
			case t.Hash == b.Hash:
				rp.Action = ActionMerge
				p.result[c.Path] = withMode(o, mode)
			default:
				rp.Action = ActionMerge
				p.result[c.Path] = withMode(o, mode)
				toMerge = append(toMerge, len(p.Paths))
			}
		default:
			rp.Action, rp.Reason = ActionConflict, conflictReason(t, b, o)
		}
		if r, ok := p.result[c.Path]; ok && rp.Action == ActionMerge && r != nil && sameEntry(r, o) && !slices.Contains(toMerge, len(p.Paths)) {
			rp.Action = ActionAlready // the merge is the tree as it is
			delete(p.result, c.Path)
		}
		p.Paths = append(p.Paths, rp)
	}
	if err := p.mergeText(toMerge, theirs, now, cp); err != nil {
		return nil, err
	}
	p.keepFolders(now.ours)
	for i := range p.Paths {
		rp := &p.Paths[i]
		if rp.Action == ActionConflict || rp.Action == ActionMarkers {
			p.Conflicts++
		}
		if rp.Action == ActionConflict {
			delete(p.result, rp.Path)
		}
	}
	return p, nil
}

// mergeText merges the text files changed both by the step and since.
func (p *revertPlan) mergeText(idx []int, theirs state, now stateOf, cp *Checkpoint) error {
	if len(idx) == 0 {
		return nil
	}
	var ps []string
	for _, i := range idx {
		ps = append(ps, p.Paths[i].Path)
	}
	t, err := theirs.read(ps)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", cp.ID, err)
	}
	b, err := now.base.read(ps)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", p.To, err)
	}
	o, err := now.ours.read(ps)
	if err != nil {
		return err
	}
	for _, i := range idx {
		rp := &p.Paths[i]
		tb, bb, ob := t[rp.Path], b[rp.Path], o[rp.Path]
		switch {
		case tb == nil || bb == nil || ob == nil:
			rp.Action, rp.Reason = ActionConflict, fmt.Sprintf("changed by the step and since, and larger than %d MiB to merge", mergeLimit>>20)
			continue
		case merge.Binary(tb) || merge.Binary(bb) || merge.Binary(ob):
			rp.Action, rp.Reason = ActionConflict, "binary, changed by the step and since"
			continue
		}
		r := merge.Text(bb, ob, tb, merge.Labels{Ours: "now", Theirs: cp.ID + " (before the step)"})
		if r.Conflicts > 0 {
			rp.Action, rp.Reason, rp.Regions = ActionConflict, "the step's lines and later changes overlap", r.Conflicts
			if !p.Markers {
				continue
			}
			rp.Action = ActionMarkers
		}
		if o := now.ours.entry(rp.Path); rp.Action == ActionMerge && o != nil && bytes.Equal(r.Text, ob) && p.result[rp.Path].Mode == o.Mode {
			rp.Action = ActionAlready // the merge is the tree as it is
			delete(p.result, rp.Path)
			continue
		}
		p.content[rp.Path] = r.Text
	}
	return nil
}

// keepFolders keeps a folder the revert would remove when something in the
// result still lies inside it (later work put files there).
func (p *revertPlan) keepFolders(ours state) {
	p.index = map[string]int{}
	for i, rp := range p.Paths {
		p.index[rp.Path] = i
	}
	for i := range p.Paths {
		rp := &p.Paths[i]
		if rp.Action != ActionRevert || p.result[rp.Path] != nil || rp.Kind != "dir" {
			continue
		}
		if p.holdsLater(rp.Path, ours) {
			rp.Action, rp.Reason = ActionKept, "it holds files added since"
			delete(p.result, rp.Path)
		}
	}
}

// holdsLater reports whether anything below dir stays after the revert.
func (p *revertPlan) holdsLater(dir string, ours state) bool {
	prefix := dir + "/"
	if m, ok := ours.(*mstate); ok {
		if m.below[dir] {
			return true // a path the step did not change: it stays
		}
		for _, rp := range p.Paths {
			if strings.HasPrefix(rp.Path, prefix) && m.entry(rp.Path) != nil && p.stays(rp.Path) {
				return true
			}
		}
		return false
	}
	d := ours.(*diskState)
	found := false
	filepath.WalkDir(filepath.Join(d.root, filepath.FromSlash(dir)), func(name string, de fs.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(d.root, name)
		if rel = filepath.ToSlash(rel); rel != dir && p.stays(rel) {
			found = true
		}
		return nil
	})
	return found
}

// stays reports whether path p, in the tree now, is still there after the
// revert.
func (p *revertPlan) stays(q string) bool {
	i, ok := p.index[q]
	return !ok || p.Paths[i].Action != ActionRevert || p.result[q] != nil
}

// sameEntry reports whether two entries are the same thing (nil: absent).
func sameEntry(a, b *snap.Entry) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Kind == b.Kind && a.Mode == b.Mode && a.Hash == b.Hash && a.Link == b.Link
}

func withMode(e *snap.Entry, m fs.FileMode) *snap.Entry {
	c := *e
	c.Mode = m
	return &c
}

// merge3 merges the permission bits as the content: a side that kept the
// base's gets the other's; both changing them differently conflicts.
func merge3(base, ours, theirs fs.FileMode) (fs.FileMode, bool) {
	switch {
	case ours == base:
		return theirs, true
	case theirs == base, ours == theirs:
		return ours, true
	}
	return ours, false
}

// conflictReason says why a path changed both by the step and since cannot
// be merged (t before the step, b after it, o now).
func conflictReason(t, b, o *snap.Entry) string {
	switch {
	case o == nil:
		return "changed by the step and deleted since"
	case t == nil:
		return "added by the step and changed since"
	case b == nil:
		return "deleted by the step and made again since"
	case o.Kind == snap.KindSymlink || b.Kind == snap.KindSymlink || t.Kind == snap.KindSymlink:
		return "a symlink changed by the step and since"
	}
	return fmt.Sprintf("a %s before the step, a %s after it and a %s now", t.Kind, b.Kind, o.Kind)
}

// composeRevert is the snapshot the tree is restored to: ours (the backup's
// manifest) with the plan's entries laid over it (snap.Overlay: not held
// when ours is not), merged content written to a small snapshot of its own
// in staging/. done removes it.
func (s *Store) composeRevert(ctx context.Context, ours *snap.Manifest, p *revertPlan) (*snap.Manifest, func(), error) {
	merged := map[string]snap.Entry{}
	done := func() {}
	if len(p.content) > 0 {
		dir, err := os.MkdirTemp(s.stagingDir(), "revert-")
		if err != nil {
			return nil, done, err
		}
		done = func() { os.RemoveAll(dir) }
		if merged, err = snapshotContent(ctx, dir, p.content); err != nil {
			return nil, done, err
		}
	}
	var set []snap.Entry
	var remove []string
	for q, e := range p.result {
		if e == nil {
			remove = append(remove, q)
			continue
		}
		n := *e
		if m, ok := merged[q]; ok {
			m.Path, m.Mode = q, e.Mode
			n = m
		}
		set = append(set, n)
	}
	return ours.Overlay(set, remove), done, nil
}

// snapshotContent writes content (by path) as a snapshot in dir and
// returns its entries by path. The snapshot is made from the list of those
// files, not from a walk, so no ignore rule (a merged .gitignore, the
// user's global excludes) can leave one out.
func snapshotContent(ctx context.Context, dir string, content map[string][]byte) (map[string]snap.Entry, error) {
	root := filepath.Join(dir, "tree")
	tree := &snap.Tree{Started: time.Now().UnixNano()}
	for q, b := range content {
		name := filepath.Join(root, filepath.FromSlash(q))
		if err := os.MkdirAll(filepath.Dir(name), layout.DirMode); err != nil {
			return nil, err
		}
		if err := os.WriteFile(name, b, layout.FileMode); err != nil {
			return nil, err
		}
		fi, err := os.Lstat(name)
		if err != nil {
			return nil, err
		}
		tree.Entries = append(tree.Entries, snap.Entry{Path: q, Kind: snap.KindFile, Mode: fi.Mode().Perm(), Size: fi.Size(), MTime: fi.ModTime().UnixNano()})
	}
	snap.SortEntries(tree.Entries)
	res, err := snap.Create(ctx, root, snap.CreateOptions{Tree: tree, Out: filepath.Join(dir, "merged.tar.gz")})
	if err != nil {
		return nil, err
	}
	mf := filepath.Join(dir, "merged.manifest")
	if err := snap.WriteManifestFile(mf, res.Manifest, nil); err != nil {
		return nil, err
	}
	m, err := snap.ReadManifest(mf)
	if err != nil {
		return nil, err
	}
	out := map[string]snap.Entry{}
	for _, e := range m.Entries {
		if _, ok := content[e.Path]; ok && e.Kind == snap.KindFile {
			out[e.Path] = e
		}
	}
	if len(out) != len(content) {
		return nil, errors.New("the merged files could not all be snapshotted")
	}
	return out, nil
}
