package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/fileid"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store/retention"
	"rewind.dev/snap"
)

// GCOptions is a retention policy to apply once. Zero fields do not limit.
type GCOptions struct {
	// Keep keeps the newest Keep checkpoints list shows (restore backups
	// are not counted) and deletes older ones, backups among them.
	Keep     int
	MaxAge   time.Duration // delete checkpoints older than this
	MaxBytes int64         // delete the oldest, restore backups first, until the store uses at most this
	// UndoReach is how many undo-restores and redos the backups kept serve
	// (see History.inReach); 0: UndoReach.
	UndoReach int
	DryRun    bool
	Budget    time.Duration // stop after this long (the rest continues next time); 0: no limit
	// Started is when the budget began to count; zero, when gc begins. A
	// hook's retention counts from the hook's start: the budget is the
	// hook's.
	Started time.Time
}

// policy is the retention policy o applies.
func (o GCOptions) policy() retention.Policy {
	return retention.Policy{Keep: o.Keep, MaxAge: o.MaxAge, MaxBytes: o.MaxBytes}
}

// undoReach is o.UndoReach, or its default.
func (o GCOptions) undoReach() int {
	if o.UndoReach > 0 {
		return o.UndoReach
	}
	return UndoReach
}

// roundFits says whether one more round of deletions fits in a budget
// begun at start, beside the writes that close a run (the index, the
// verified file), which cost about as much as the longest round yet, and
// a twentieth of the budget kept for what the process does around it
// (starting, reading the request, answering).
func roundFits(start time.Time, longest, budget time.Duration) bool {
	return time.Since(start)+2*longest+budget/20 <= budget
}

// GCResult says what gc removed (or would remove) and what it freed.
type GCResult struct {
	Type       string   `json:"type"` // "gc"
	DryRun     bool     `json:"dry_run"`
	Removed    []string `json:"removed"`
	FreedBytes int64    `json:"freed_bytes"`
	Kept       int      `json:"kept"`
	// KeptBackups is how many of those kept are restore backups, which list
	// shows only with --all.
	KeptBackups int      `json:"kept_backups"`
	Protected   []string `json:"protected,omitempty"` // would go by the policy, but pinned, needed by undo-restore or redo, or perhaps by a checkpoint gc cannot read or remove
	// Damaged lists the checkpoints gc could not read (metadata or
	// manifest): what they need cannot be known, so nothing older than the
	// newest of them is deleted, nor any archive it might read.
	Damaged []string `json:"damaged,omitempty"`
	// Unremovable lists the checkpoints gc may not remove (another
	// user's, or their removal met a permission error): kept, with what
	// they build on, while the rest goes as the policy says.
	Unremovable []Unremovable `json:"unremovable,omitempty"`
	Partial     bool          `json:"partial,omitempty"` // the time budget ran out
}

// kept counts what is left of cps (the readable checkpoints gc began
// with) once res.Removed are gone.
func (res *GCResult) kept(cps []*Checkpoint) {
	gone := map[string]bool{}
	for _, id := range res.Removed {
		gone[id] = true
	}
	res.Kept, res.KeptBackups = 0, 0
	for _, c := range cps {
		if !gone[c.ID] {
			res.Kept++
			if c.Backup() {
				res.KeptBackups++
			}
		}
	}
}

// GC deletes old checkpoints by the policy, which counts the checkpoints
// list shows (see package retention): never pinned ones, never the backups
// undo-restore and redo need within UndoReach, never the newest nor the
// newest list shows. A checkpoint whose
// transcript bytes others build on is merged into them first; snapshots
// shared with others are hard links, so they survive. It deletes nothing
// that any checkpoint, readable or not, might still need: a checkpoint whose
// metadata or manifest cannot be read might need anything older than it, so
// those are kept (and listed in Damaged), and a checkpoint whose removal
// would need a file that is damaged is kept too.
func (s *Store) GC(ctx context.Context, o GCOptions) (*GCResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return s.gcLocked(ctx, o)
}

func (s *Store) gcLocked(ctx context.Context, o GCOptions) (*GCResult, error) {
	start := o.Started
	if start.IsZero() {
		start = time.Now()
	}
	if o.Budget > 0 && !o.DryRun { // retention at a hook
		ids, err := s.IDs()
		if err != nil {
			return nil, err
		}
		if idx, ok := s.readIndex(ids); ok {
			return s.gcIndexed(ctx, o, start, ids, idx)
		}
	}
	res := &GCResult{Type: "gc", DryRun: o.DryRun, Removed: []string{}}
	cps, bad, err := s.List() // newest first
	if err != nil {
		return nil, err
	}
	h, err := s.History()
	if err != nil {
		return nil, err
	}
	g := s.readGraph(ctx, cps, bad)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	res.Damaged = g.damaged
	res.Unremovable = slices.Clone(g.unremovables)
	barrier := "" // the newest damaged id: nothing older goes
	if len(res.Damaged) > 0 {
		barrier = res.Damaged[len(res.Damaged)-1]
	}
	plan := gcPlan(o, cps, g, h.inReach(o.undoReach()), barrier, res)
	if o.DryRun {
		for _, c := range plan {
			res.Removed = append(res.Removed, c.ID)
			res.FreedBytes += dirBytes(c.Dir, true)
		}
		res.kept(cps)
		return res, nil
	}
	err = s.removeInRounds(ctx, o, start, g, plan, res)
	res.kept(cps)
	if err != nil {
		return res, err
	}
	s.writeIndex(indexFromGraph(g)) // (what a hook's retention plans from next time)
	if res.Partial || o.Budget > 0 && time.Since(start) > o.Budget {
		// The sweeps of layers/ and of the verified file read the whole
		// store: a hook's budget buys rounds, and the next run within its
		// budget sweeps (one that deletes nothing too).
		return res, nil
	}
	freed, err := s.sweepLayers(barrier, g)
	res.FreedBytes += freed
	k := s.newChecker(ctx)
	k.Prune()
	k.Save()
	if err != nil {
		return res, err
	}
	return res, nil
}

// gcPlan is what gc deletes of cps (newest first), oldest first: what the policy lets go,
// keeping what must stay (pinned, within undo reach, older than the damaged barrier, needed by
// a survivor that cannot be read, or unremovable). What the policy keeps is written into
// res.Protected.
func gcPlan(o GCOptions, cps []*Checkpoint, g *gcGraph, reach map[string]bool, barrier string, res *GCResult) []*Checkpoint {
	byID := make(map[string]*Checkpoint, len(cps))
	items := make([]retention.Item, len(cps)) // oldest first
	var total int64
	for i, c := range cps {
		byID[c.ID] = c
		it := retention.Item{ID: c.ID, Created: c.CreatedAt, Backup: c.Backup()}
		if o.MaxBytes > 0 { // only this policy needs every folder's size
			it.Bytes = dirBytes(c.Dir, false)
			total += it.Bytes
		}
		items[len(cps)-1-i] = it
	}
	// Decide by the policy, keeping what must stay; then drop from the plan
	// what a survivor needs that cannot be read (errNeeded), and decide
	// again without it, until nothing changes.
	needed := map[string]bool{}
	kept := func(id string) bool {
		return byID[id].Pinned != "" || reach[id] || CompareIDs(id, barrier) <= 0 || needed[id] || g.fixed[id]
	}
	var plan []*Checkpoint // oldest first
	for {
		var goes []string
		goes, res.Protected = o.policy().Judge(items, total, time.Now(), kept)
		// (those gc may not remove are reported as such, not as protected)
		res.Protected = slices.DeleteFunc(res.Protected, func(id string) bool { return g.fixed[id] })
		plan = plan[:0]
		for _, id := range goes {
			plan = append(plan, byID[id])
		}
		more := g.unremovable(plan)
		if len(more) == 0 {
			return plan
		}
		for _, id := range more {
			needed[id] = true
		}
	}
}

// removeInRounds deletes plan in rounds, oldest first: all at once without a budget, else a
// round at a time until the budget is spent (the next run goes on; res.Partial says so). Each
// round keeps every survivor whole before it deletes anything.
func (s *Store) removeInRounds(ctx context.Context, o GCOptions, start time.Time, g *gcGraph, plan []*Checkpoint, res *GCResult) error {
	round := len(plan)
	if o.Budget > 0 {
		round = gcRound
	}
	p := progressFrom(ctx)
	p.Begin()
	p.Expect(int64(len(plan)), 0)
	var longest time.Duration // the longest round yet: one is not started unless it fits
	for first := true; len(plan) > 0; first = false {
		// The first round always runs: reading the store may take the
		// whole budget of a hook, and retention must still catch up.
		if o.Budget > 0 && !first && !roundFits(start, longest, o.Budget) {
			res.Partial = true
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		b := plan[:min(round, len(plan))]
		plan = plan[len(b):]
		began := time.Now()
		freed, err := s.removeBatch(ctx, g, b)
		longest = max(longest, time.Since(began))
		res.FreedBytes += freed
		for _, c := range b {
			if g.nodes[c.ID] == nil { // removed
				res.Removed = append(res.Removed, c.ID)
			}
		}
		p.Add(int64(len(b)), 0)
		if left, ok := g.refused(err, b, res); ok {
			// The rest of the batch was left whole: it goes back in the
			// plan, less what the one refused builds on.
			plan, err = append(left, plan...), nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// gcRound is how many checkpoints a round of gc under a time budget (the
// retention a hook runs) deletes: a round keeps its survivors whole before
// it deletes, so a budget that runs out between rounds leaves nothing half
// done, and the next hook goes on from there.
var gcRound = 200 // a variable for tests

// gcNode is what gc knows of one checkpoint.
type gcNode struct {
	c        *Checkpoint
	parent   string   // the id whose manifest this one's is a delta over; "" for a full one
	archives []string // the archives its manifest file itself names (absolute)
}

// gcGraph is every readable checkpoint with what its manifest builds on,
// read once per gc run; removeBatch keeps it up to date.
type gcGraph struct {
	s       *Store
	nodes   map[string]*gcNode
	damaged []string // unreadable checkpoints (metadata or manifest), oldest first
	full    map[string]*snap.Manifest
	// fixed are the checkpoints gc may neither remove nor rewrite (see
	// Unremovable), listed in unremovables.
	fixed        map[string]bool
	unremovables []Unremovable
}

// readGraph reads every checkpoint's manifest header and archives. A
// checkpoint whose metadata or manifest cannot be read is listed in damaged.
func (s *Store) readGraph(ctx context.Context, cps []*Checkpoint, bad []string) *gcGraph {
	g := &gcGraph{s: s, nodes: make(map[string]*gcNode, len(cps)), damaged: slices.Clone(bad), full: map[string]*snap.Manifest{}, fixed: map[string]bool{}}
	for i, c := range cps {
		if i%256 == 0 && ctx.Err() != nil {
			return g
		}
		n, err := s.readNode(c)
		if err != nil {
			g.damaged = append(g.damaged, c.ID)
			continue
		}
		g.nodes[c.ID] = n
	}
	slices.SortFunc(g.damaged, CompareIDs)
	for _, c := range cps {
		g.checkOwner(c.ID, g.nodes[c.ID] != nil)
	}
	for _, id := range bad {
		g.checkOwner(id, false)
	}
	slices.SortFunc(g.unremovables, func(a, b Unremovable) int { return CompareIDs(a.ID, b.ID) })
	return g
}

// checkOwner marks checkpoint id fixed, and lists it as unremovable, when
// its folder is another user's (readable: its manifest was read).
func (g *gcGraph) checkOwner(id string, readable bool) {
	if u := g.s.notYours(id, readable); u != nil {
		g.fixed[id] = true
		g.unremovables = append(g.unremovables, *u)
	}
}

// refused handles err from removeBatch(batch): when a checkpoint's removal
// met a permission error, it is listed in res and fixed, and what is left
// of batch, less what it builds on, is returned to go back in the plan.
func (g *gcGraph) refused(err error, batch []*Checkpoint, res *GCResult) ([]*Checkpoint, bool) {
	var ue *unremovableError
	if !errors.As(err, &ue) {
		return nil, false
	}
	g.fixed[ue.u.ID] = true
	g.unremovables = append(g.unremovables, *ue.u)
	res.Unremovable = append(res.Unremovable, *ue.u)
	var left []*Checkpoint
	for _, c := range batch {
		if g.nodes[c.ID] != nil && c.ID != ue.u.ID {
			left = append(left, c)
		}
	}
	for {
		more := g.unremovable(left)
		if len(more) == 0 {
			return left, true
		}
		left = slices.DeleteFunc(left, func(c *Checkpoint) bool {
			if slices.Contains(more, c.ID) {
				res.Protected = append(res.Protected, c.ID)
				return true
			}
			return false
		})
	}
}

// readNode reads what gc needs of c's manifest file (not its chain).
func (s *Store) readNode(c *Checkpoint) (*gcNode, error) {
	arcs, err := snap.ManifestArchives(c.ManifestPath())
	if err != nil {
		return nil, err
	}
	parent, err := manifestParent(c.ManifestPath())
	if err != nil {
		return nil, err
	}
	return &gcNode{c: c, archives: arcs, parent: s.parentID(parent)}, nil
}

// parentID names the manifest at path (absolute), one a manifest is a delta
// over: by its checkpoint's id, or by its path when it is not a
// checkpoint's (never one gc deletes); "" for none.
func (s *Store) parentID(path string) string {
	if path == "" {
		return ""
	}
	if filepath.Dir(filepath.Dir(path)) != s.checkpointsDir() || filepath.Base(path) != ManifestFile {
		return path
	}
	return filepath.Base(filepath.Dir(path))
}

// manifestParent is the manifest the one at name is a delta over
// (absolute), or "" for a full one.
func manifestParent(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return "", err
	}
	var hdr struct {
		Parent string `json:"parent"`
	}
	if err := json.Unmarshal([]byte(line), &hdr); err != nil {
		return "", err
	}
	if hdr.Parent == "" {
		return "", nil
	}
	return filepath.Join(filepath.Dir(name), filepath.FromSlash(hdr.Parent)), nil
}

// rebase is how one survivor of a batch is kept whole without it.
type rebase struct {
	n *gcNode
	// over is the nearest ancestor outside the batch its manifest is
	// rewritten over ("" in full); manifest says whether it needs that.
	over     string
	manifest bool
	// merge lists, oldest first, the batch's transcript files its own
	// builds on, to merge into it; base and offset are what it then
	// builds on.
	merge      []string
	base       string
	baseOffset int64
	chain      int // links merged away
}

// plan lists what the survivors need done before batch (a set of ids) is
// deleted; what cannot be done (a file it needs does not read) is returned
// as the ids of the batch to keep, each with why.
func (g *gcGraph) plan(batch map[string]bool) ([]*rebase, map[string]error) {
	var out []*rebase
	keep := map[string]error{}
	ids := make([]string, 0, len(g.nodes))
	for id := range g.nodes {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, CompareIDs)
	for _, id := range ids {
		n := g.nodes[id]
		if batch[id] {
			continue
		}
		r := &rebase{n: n}
		if g.fixed[id] {
			// Another user's (or one gc may not remove): it cannot be
			// rewritten over something older, so what it builds on stays.
			for _, b := range []string{n.parent, transcriptBase(n.c)} {
				if batch[b] {
					keep[b] = fmt.Errorf("%w (%s, which gc may not rewrite, builds on it)", errNeeded, id)
				}
			}
			continue
		}
		if batch[n.parent] {
			r.manifest = true
			var through []string
			for a := n.parent; batch[a]; a = g.nodes[a].parent {
				through = append(through, a)
				r.over = g.nodes[a].parent
			}
			err := g.readFull(id)
			if err == nil && r.over != "" {
				err = g.readFull(r.over)
			}
			if err != nil {
				for _, a := range through {
					keep[a] = fmt.Errorf("%w (%s's manifest: %v)", errNeeded, id, err)
				}
			}
		}
		if tr := n.c.Transcript; tr != nil && batch[tr.Base] {
			var files []string // the batch's, nearest first
			var through []string
			var problem error
			for b := tr.Base; batch[b]; {
				bc := g.nodes[b].c
				through = append(through, b)
				if bc.Transcript == nil || bc.Transcript.Snapshot == "" {
					problem = fmt.Errorf("%w (%s's transcript builds on none)", errNeeded, id)
					break
				}
				files = append(files, filepath.Join(bc.Dir, bc.Transcript.Snapshot))
				r.base, r.baseOffset = bc.Transcript.Base, bc.Transcript.BaseOffset
				r.chain++
				b = bc.Transcript.Base
			}
			slices.Reverse(files)
			files = append(files, filepath.Join(n.c.Dir, tr.Snapshot))
			for _, f := range files {
				if _, err := os.Stat(f); err != nil && problem == nil {
					problem = fmt.Errorf("%w (%s's transcript: %v)", errNeeded, id, err)
				}
			}
			if problem != nil {
				for _, a := range through {
					keep[a] = problem
				}
			}
			r.merge = files
		}
		if r.manifest || r.merge != nil {
			out = append(out, r)
		}
	}
	return out, keep
}

// transcriptBase is the checkpoint c's transcript builds on, or "".
func transcriptBase(c *Checkpoint) string {
	if c.Transcript == nil {
		return ""
	}
	return c.Transcript.Base
}

// readFull opens (once) the whole manifest of checkpoint id, and reads it
// through: a line that does not read keeps what it builds on. It is opened
// as a save opens its parent (snap.OpenManifest): keepWhole writes it
// again in passes, and a tree's worth of entries is not held.
func (g *gcGraph) readFull(id string) error {
	if _, ok := g.full[id]; ok {
		return nil
	}
	name := id // a parent that is not a checkpoint's manifest is named by its path
	if n := g.nodes[id]; n != nil {
		name = n.c.ManifestPath()
	} else if !filepath.IsAbs(id) {
		return fmt.Errorf("checkpoint %s cannot be read", id)
	}
	m, err := snap.OpenManifest(name)
	if err != nil {
		return err
	}
	if err := m.ReadThrough(); err != nil {
		return err
	}
	g.full[id] = m
	return nil
}

// unremovable lists the checkpoints of plan that must stay because a
// survivor needs what cannot be read.
func (g *gcGraph) unremovable(plan []*Checkpoint) []string {
	batch := map[string]bool{}
	for _, c := range plan {
		batch[c.ID] = true
	}
	_, keep := g.plan(batch)
	var out []string
	for id := range keep {
		out = append(out, id)
	}
	slices.SortFunc(out, CompareIDs)
	return out
}

// errNeeded means a checkpoint is kept: removing it would need a file that
// is damaged (the manifest a newer one's must be rewritten over, transcript
// bytes a newer one builds on).
var errNeeded = errors.New("kept: a newer checkpoint needs what cannot be read")

// remove deletes one checkpoint (see removeBatch).
func (s *Store) remove(c *Checkpoint) error {
	cps, bad, err := s.List()
	if err != nil {
		return err
	}
	g := s.readGraph(context.Background(), cps, bad)
	if g.nodes[c.ID] == nil {
		return fmt.Errorf("gc: %s cannot be read", c.ID)
	}
	_, err = s.removeBatch(context.Background(), g, []*Checkpoint{c})
	return err
}

// removeBatch deletes the checkpoints of batch and returns the bytes their
// folders alone held. What the survivors build on is kept whole first, each
// survivor's files rewritten once however many of the batch it builds on: a
// manifest that is a delta over one of the batch is rewritten over its
// nearest ancestor outside it (or in full), and a transcript that builds on
// the batch's bytes gets them merged in. Each file is replaced atomically,
// so a crash at any point leaves every chain readable. Then the folders are
// renamed out of checkpoints/ newest first — so one killed half way leaves
// only checkpoints whose own chains are whole — with one folder sync for
// all, and deleted; archives in layers/ that nothing reads any more go in
// sweepLayers. A survivor that needs what cannot be read would have kept
// the checkpoints it builds on (see unremovable); if the store changed
// since, errNeeded is returned and nothing is deleted.
func (s *Store) removeBatch(ctx context.Context, g *gcGraph, batch []*Checkpoint) (int64, error) {
	// The manifests opened for this batch are read from their chains' files
	// as they go: once it has rewritten survivors and deleted checkpoints,
	// some of those files are gone or changed, and a later batch opens what
	// it needs again.
	defer clear(g.full)
	in := map[string]bool{}
	for _, c := range batch {
		in[c.ID] = true
	}
	todo, keep := g.plan(in)
	for _, err := range keep {
		return 0, err
	}
	if err := s.dropIndex(); err != nil {
		return 0, err
	}
	for _, r := range todo {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := s.keepWhole(g, r); err != nil {
			return 0, err
		}
	}
	gone := slices.Clone(batch)
	slices.SortFunc(gone, func(a, b *Checkpoint) int { return CompareIDs(b.ID, a.ID) })
	var freed int64
	var trash []string
	var err error
	for _, c := range gone {
		freed += dirBytes(c.Dir, true)
		t := filepath.Join(s.stagingDir(), ".gc-"+c.ID)
		if err = durable.FaultOr("rename", c.Dir, func() error { return os.Rename(c.Dir, t) }); err != nil {
			// The older ones are left whole, for a newer one that stays
			// may build on them (see gcGraph.refused).
			if err = s.removalRefused(c, err); !errors.As(err, new(*unremovableError)) {
				err = fmt.Errorf("gc: remove %s: %w", c.ID, err)
			}
			break
		}
		trash = append(trash, t)
		delete(g.nodes, c.ID)
	}
	if len(trash) > 0 {
		durable.SyncDir(s.checkpointsDir())
	}
	for _, t := range trash {
		if e := os.RemoveAll(t); e != nil && err == nil {
			err = e
		}
	}
	return freed, err
}

// keepWhole rewrites what one survivor needs rewritten (see removeBatch).
func (s *Store) keepWhole(g *gcGraph, r *rebase) error {
	c := r.n.c
	if r.manifest {
		m := g.full[c.ID]
		var parent *snap.Manifest
		m.Header.Parent = ""
		if r.over != "" {
			parent = g.full[r.over]
			m.Header.Parent = parent.File
		}
		if err := snap.WriteManifestFile(c.ManifestPath(), m, parent); err != nil {
			return fmt.Errorf("gc: keep %s's snapshot chain whole: %w", c.ID, err)
		}
		n, err := s.readNode(c)
		if err != nil {
			return fmt.Errorf("gc: keep %s's snapshot chain whole: %w", c.ID, err)
		}
		r.n.parent, r.n.archives = n.parent, n.archives
	}
	if r.merge != nil {
		if err := s.mergeTranscript(c, r); err != nil {
			return fmt.Errorf("gc: keep %s's transcript whole: %w", c.ID, err)
		}
	}
	return nil
}

// sweepLayers deletes the archives in layers/ that no checkpoint reads from
// any more, and returns the bytes freed. It deletes only archives Rewind
// names (<id>.tar.gz), and none at or before barrier, the newest checkpoint
// it cannot read (which might read any of those). g knows what every
// readable checkpoint's manifest names; nil reads them. Call it under the
// lock (no save is writing one then).
func (s *Store) sweepLayers(barrier string, g *gcGraph) (int64, error) {
	if g == nil {
		cps, bad, err := s.List()
		if err != nil {
			return 0, err
		}
		g = s.readGraph(context.Background(), cps, bad)
	}
	if len(g.damaged) > 0 {
		barrier = maxID(barrier, g.damaged[len(g.damaged)-1])
	}
	used := map[string]bool{}
	for _, n := range g.nodes {
		for _, a := range n.archives {
			used[a] = true
		}
	}
	des, err := os.ReadDir(s.layersDir())
	if err != nil {
		return 0, nil
	}
	var freed int64
	for _, de := range des {
		id, ok := strings.CutSuffix(de.Name(), ".tar.gz")
		p := filepath.Join(s.layersDir(), de.Name())
		if !ok || !isID(id) || CompareIDs(id, barrier) <= 0 || used[p] {
			continue
		}
		if fi, err := de.Info(); err == nil {
			freed += fi.Size()
		}
		os.Remove(p)
	}
	return freed, nil
}

// mergeTranscript writes c's transcript as one file holding the batch's
// links it builds on (r.merge) and its own, and points its metadata at it.
func (s *Store) mergeTranscript(c *Checkpoint, r *rebase) error {
	name := "transcript." + strconv.FormatInt(time.Now().UnixNano(), 36) + ".jsonl.gz"
	merged := filepath.Join(c.Dir, name)
	if err := concatFiles(merged, r.merge...); err != nil {
		return err
	}
	old := filepath.Join(c.Dir, c.Transcript.Snapshot)
	md := c.Metadata
	tr := *c.Transcript
	tr.Snapshot, tr.Base, tr.BaseOffset = name, r.base, r.baseOffset
	if tr.Chain > 1 {
		tr.Chain = max(1, tr.Chain-r.chain) // the merged links are one file now
	}
	md.Transcript = &tr
	if err := writeMetadata(c.Dir, &md); err != nil {
		os.Remove(merged)
		return err
	}
	c.Metadata = md
	return os.Remove(old)
}

// concatFiles writes the files srcs one after the other as the new file dst, durably.
func concatFiles(dst string, srcs ...string) error {
	return durable.Write(dst, layout.FileMode, func(w io.Writer) error {
		for _, src := range srcs {
			in, err := os.Open(src)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, in)
			in.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}, durable.NoReplace)
}

// dirBytes is the disk use of a checkpoint folder; with onlyOwned, files
// shared by hard links with other checkpoints do not count (deleting the
// folder would not free them).
func dirBytes(dir string, onlyOwned bool) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if onlyOwned && fileid.Links(fi) > 1 {
			return nil
		}
		n += fi.Size()
		return nil
	})
	return n
}

// DiskUse is the bytes the store takes, hard links counted once.
func (s *Store) DiskUse() int64 {
	seen := map[uint64]bool{}
	var n int64
	filepath.WalkDir(s.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if ino := fileid.Inode(fi); ino != 0 { // 0: unknown (Windows), every file counts
			if seen[ino] {
				return nil
			}
			seen[ino] = true
		}
		n += fi.Size()
		return nil
	})
	return n
}

// ApplyRetention runs the configured policy within budget, counted from
// started, and records what it removed in hook-state.json; call it under
// the lock.
func (s *Store) ApplyRetention(ctx context.Context, budget time.Duration, started time.Time) (*GCResult, error) {
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	age, err := ParseAge(cfg.Retention.MaxAge)
	if err != nil {
		return nil, fmt.Errorf("config retention.max_age: %w", err)
	}
	res, err := s.gcLocked(ctx, GCOptions{Keep: cfg.Retention.MaxCheckpoints, MaxAge: age, MaxBytes: cfg.Retention.MaxBytes, Budget: budget, Started: started})
	if err != nil {
		return res, err
	}
	hs := s.HookState()
	hs.SinceRetention = 0
	hs.LastRetentionAt = time.Now().UTC()
	hs.LastRetentionFreed = res.FreedBytes
	hs.LastRetentionCount = len(res.Removed)
	return res, s.SetHookState(hs)
}
