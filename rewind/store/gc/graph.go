package gc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"rewind.dev/rewind/store/record"
	"rewind.dev/snap"
)

// node is what gc knows of one checkpoint.
type node struct {
	c        *record.Checkpoint
	parent   string   // the id whose manifest this one's is a delta over; "" for a full one
	archives []string // the archives its manifest file itself names (absolute)
}

// graph is every readable checkpoint with what its manifest builds on,
// read once per gc run; removeBatch keeps it up to date.
type graph struct {
	st      Store
	nodes   map[string]*node
	damaged []string // unreadable checkpoints (metadata or manifest), oldest first
	full    map[string]*snap.Manifest
	// fixed are the checkpoints gc may neither remove nor rewrite (see
	// Unremovable), listed in unremovables.
	fixed        map[string]bool
	unremovables []Unremovable
}

// readGraph reads every checkpoint's manifest header and archives. A
// checkpoint whose metadata or manifest cannot be read is listed in damaged.
func (st Store) readGraph(ctx context.Context, cps []*record.Checkpoint, bad []string) *graph {
	g := &graph{st: st, nodes: make(map[string]*node, len(cps)), damaged: slices.Clone(bad), full: map[string]*snap.Manifest{}, fixed: map[string]bool{}}
	for i, c := range cps {
		if i%256 == 0 && ctx.Err() != nil {
			return g
		}
		n, err := st.readNode(c)
		if err != nil {
			g.damaged = append(g.damaged, c.ID)
			continue
		}
		g.nodes[c.ID] = n
	}
	slices.SortFunc(g.damaged, record.CompareIDs)
	for _, c := range cps {
		g.checkOwner(c.ID, g.nodes[c.ID] != nil)
	}
	for _, id := range bad {
		g.checkOwner(id, false)
	}
	slices.SortFunc(g.unremovables, func(a, b Unremovable) int { return record.CompareIDs(a.ID, b.ID) })
	return g
}

// checkOwner marks checkpoint id fixed, and lists it as unremovable, when
// its folder is another user's (readable: its manifest was read).
func (g *graph) checkOwner(id string, readable bool) {
	if u := g.st.NotYours(id, readable); u != nil {
		g.fixed[id] = true
		g.unremovables = append(g.unremovables, *u)
	}
}

// refused handles err from removeBatch(batch): when a checkpoint's removal
// met a permission error, it is listed in res and fixed, and what is left
// of batch, less what it builds on, is returned to go back in the plan.
func (g *graph) refused(err error, batch []*record.Checkpoint, res *Result) ([]*record.Checkpoint, bool) {
	var ue *unremovableError
	if !errors.As(err, &ue) {
		return nil, false
	}
	g.fixed[ue.u.ID] = true
	g.unremovables = append(g.unremovables, *ue.u)
	res.Unremovable = append(res.Unremovable, *ue.u)
	var left []*record.Checkpoint
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
		left = slices.DeleteFunc(left, func(c *record.Checkpoint) bool {
			if slices.Contains(more, c.ID) {
				res.Protected = append(res.Protected, c.ID)
				return true
			}
			return false
		})
	}
}

// readNode reads what gc needs of c's manifest file (not its chain).
func (st Store) readNode(c *record.Checkpoint) (*node, error) {
	arcs, err := snap.ManifestArchives(c.ManifestPath())
	if err != nil {
		return nil, err
	}
	parent, err := manifestParent(c.ManifestPath())
	if err != nil {
		return nil, err
	}
	return &node{c: c, archives: arcs, parent: st.parentID(parent)}, nil
}

// parentID names the manifest at path (absolute), one a manifest is a delta
// over: by its checkpoint's id, or by its path when it is not a
// checkpoint's (never one gc deletes); "" for none.
func (st Store) parentID(path string) string {
	if path == "" {
		return ""
	}
	if filepath.Dir(filepath.Dir(path)) != st.checkpointsDir() || filepath.Base(path) != record.ManifestFile {
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
	n *node
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
func (g *graph) plan(batch map[string]bool) ([]*rebase, map[string]error) {
	var out []*rebase
	keep := map[string]error{}
	ids := make([]string, 0, len(g.nodes))
	for id := range g.nodes {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, record.CompareIDs)
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
func transcriptBase(c *record.Checkpoint) string {
	if c.Transcript == nil {
		return ""
	}
	return c.Transcript.Base
}

// readFull opens (once) the whole manifest of checkpoint id, and reads it
// through: a line that does not read keeps what it builds on. It is opened
// as a save opens its parent (snap.OpenManifest): keepWhole writes it
// again in passes, and a tree's worth of entries is not held.
func (g *graph) readFull(id string) error {
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
func (g *graph) unremovable(plan []*record.Checkpoint) []string {
	batch := map[string]bool{}
	for _, c := range plan {
		batch[c.ID] = true
	}
	_, keep := g.plan(batch)
	var out []string
	for id := range keep {
		out = append(out, id)
	}
	slices.SortFunc(out, record.CompareIDs)
	return out
}

// errNeeded means a checkpoint is kept: removing it would need a file that
// is damaged (the manifest a newer one's must be rewritten over, transcript
// bytes a newer one builds on).
var errNeeded = errors.New("kept: a newer checkpoint needs what cannot be read")

// maxID is the newer of two ids (record.CompareIDs).
func maxID(a, b string) string {
	if record.CompareIDs(a, b) < 0 {
		return b
	}
	return a
}
