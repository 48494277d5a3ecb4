// Package gc deletes checkpoints: by a retention policy (package
// retention), once with gc or within a hook's time budget in rounds, and
// never what a checkpoint that stays might still need. It holds the graph
// of what builds on what, the removal in batches that keeps every
// survivor whole (manifests re-based, transcripts merged, each file
// replaced atomically), the sweeps of layers/, and the store's index,
// which retention at a hook plans from. It sees the store through Store,
// and imports no store.
package gc

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	"rewind.dev/internal/layout"
	"rewind.dev/internal/progress"
	"rewind.dev/rewind/store/record"
	"rewind.dev/rewind/store/retention"
	"rewind.dev/rewind/store/verify"
)

// Store is what gc sees of a store. Call gc's functions under the
// store's lock: saves and pins append to the index under it, and no save
// is writing an archive to layers/ then.
type Store struct {
	// verify.Store is the store as its checks see it (its folder, Load):
	// gc prunes the verified file of what it deleted.
	verify.Store
	// IDs lists the checkpoints' folders, oldest first, without reading
	// metadata.
	IDs func() ([]string, error)
	// List reads every checkpoint, newest first; bad are the folders
	// whose metadata does not load.
	List func() (cps []*record.Checkpoint, bad []string, err error)
	// InReach reads the restore history and returns the backups that some
	// run of at most n undo-restores and redos would restore from (0: the
	// store's reach).
	InReach func(n int) (map[string]bool, error)
	// WriteMetadata replaces a checkpoint's metadata.json atomically, as a
	// save writes it.
	WriteMetadata func(dir string, md *record.Metadata) error
}

func (st Store) checkpointsDir() string         { return filepath.Join(st.Dir, layout.CheckpointsDir) }
func (st Store) stagingDir() string             { return filepath.Join(st.Dir, layout.StagingDir) }
func (st Store) layersDir() string              { return filepath.Join(st.Dir, layout.LayersDir) }
func (st Store) checkpointDir(id string) string { return filepath.Join(st.checkpointsDir(), id) }

// Options is a retention policy to apply once. Zero fields do not limit.
type Options struct {
	// Keep keeps the newest Keep checkpoints list shows (restore backups
	// are not counted) and deletes older ones, backups among them.
	Keep     int
	MaxAge   time.Duration // delete checkpoints older than this
	MaxBytes int64         // delete the oldest, restore backups first, until the store uses at most this
	// UndoReach is how many undo-restores and redos the backups kept serve
	// (see Store.InReach); 0: the store's.
	UndoReach int
	DryRun    bool
	Budget    time.Duration // stop after this long (the rest continues next time); 0: no limit
	// Started is when the budget began to count; zero, when gc begins. A
	// hook's retention counts from the hook's start: the budget is the
	// hook's.
	Started time.Time
	Round   int // checkpoints a round deletes under a budget; 0: the default
}

// policy is the retention policy o applies.
func (o Options) policy() retention.Policy {
	return retention.Policy{Keep: o.Keep, MaxAge: o.MaxAge, MaxBytes: o.MaxBytes}
}

// defaultRound is how many checkpoints a round of gc under a time budget
// (the retention a hook runs) deletes: a round keeps its survivors whole
// before it deletes, so a budget that runs out between rounds leaves
// nothing half done, and the next hook goes on from there.
const defaultRound = 200

// round is o.Round, or its default.
func (o Options) round() int {
	if o.Round > 0 {
		return o.Round
	}
	return defaultRound
}

// roundFits says whether one more round of deletions fits in a budget
// begun at start, beside the writes that close a run (the index, the
// verified file), which cost about as much as the longest round yet, and
// a twentieth of the budget kept for what the process does around it
// (starting, reading the request, answering).
func roundFits(start time.Time, longest, budget time.Duration) bool {
	return time.Since(start)+2*longest+budget/20 <= budget
}

// Result says what gc removed (or would remove) and what it freed.
type Result struct {
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
func (res *Result) kept(cps []*record.Checkpoint) {
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

// Run deletes old checkpoints by o's policy, which counts the checkpoints
// list shows (see package retention): never pinned ones, never the backups
// undo-restore and redo need within o.UndoReach, never the newest nor the
// newest list shows. A checkpoint whose transcript bytes others build on
// is merged into them first; snapshots shared with others are hard links,
// so they survive. It deletes nothing that any checkpoint, readable or
// not, might still need: a checkpoint whose metadata or manifest cannot be
// read might need anything older than it, so those are kept (and listed
// in Damaged), and a checkpoint whose removal would need a file that is
// damaged is kept too. Under a budget (retention at a hook) it plans from
// the store's index when that can be trusted (see rounds.go).
func Run(ctx context.Context, st Store, o Options) (*Result, error) {
	start := o.Started
	if start.IsZero() {
		start = time.Now()
	}
	if o.Budget > 0 && !o.DryRun { // retention at a hook
		ids, err := st.IDs()
		if err != nil {
			return nil, err
		}
		if idx, ok := st.readIndex(ids); ok {
			return st.fromIndex(ctx, o, start, ids, idx)
		}
	}
	res := &Result{Type: "gc", DryRun: o.DryRun, Removed: []string{}}
	cps, bad, err := st.List() // newest first
	if err != nil {
		return nil, err
	}
	reach, err := st.InReach(o.UndoReach)
	if err != nil {
		return nil, err
	}
	g := st.readGraph(ctx, cps, bad)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	res.Damaged = g.damaged
	res.Unremovable = slices.Clone(g.unremovables)
	barrier := "" // the newest damaged id: nothing older goes
	if len(res.Damaged) > 0 {
		barrier = res.Damaged[len(res.Damaged)-1]
	}
	plan := choose(o, cps, g, reach, barrier, res)
	if o.DryRun {
		for _, c := range plan {
			res.Removed = append(res.Removed, c.ID)
			res.FreedBytes += dirBytes(c.Dir, true)
		}
		res.kept(cps)
		return res, nil
	}
	err = st.removeInRounds(ctx, o, start, g, plan, res)
	res.kept(cps)
	if err != nil {
		return res, err
	}
	st.writeIndex(indexFromGraph(g)) // (what a hook's retention plans from next time)
	if res.Partial || o.Budget > 0 && time.Since(start) > o.Budget {
		// The sweeps of layers/ and of the verified file read the whole
		// store: a hook's budget buys rounds, and the next run within its
		// budget sweeps (one that deletes nothing too).
		return res, nil
	}
	freed, err := st.sweepLayers(barrier, g)
	res.FreedBytes += freed
	k := verify.New(ctx, st.Store)
	k.Prune()
	k.Save()
	if err != nil {
		return res, err
	}
	return res, nil
}

// choose is what gc deletes of cps (newest first), oldest first: what the policy lets go,
// keeping what must stay (pinned, within undo reach, older than the damaged barrier, needed by
// a survivor that cannot be read, or unremovable). What the policy keeps is written into
// res.Protected.
func choose(o Options, cps []*record.Checkpoint, g *graph, reach map[string]bool, barrier string, res *Result) []*record.Checkpoint {
	byID := make(map[string]*record.Checkpoint, len(cps))
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
		return byID[id].Pinned != "" || reach[id] || record.CompareIDs(id, barrier) <= 0 || needed[id] || g.fixed[id]
	}
	var plan []*record.Checkpoint // oldest first
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
func (st Store) removeInRounds(ctx context.Context, o Options, start time.Time, g *graph, plan []*record.Checkpoint, res *Result) error {
	round := len(plan)
	if o.Budget > 0 {
		round = o.round()
	}
	p := progress.From(ctx, progress.Checkpoints)
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
		freed, err := st.removeBatch(ctx, g, b)
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
