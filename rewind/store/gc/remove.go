package gc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/fileid"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store/record"
	"rewind.dev/snap"
)

// Remove deletes checkpoint c whatever the policy says, as gc deletes a
// batch (see removeBatch): what newer ones build on is kept whole. The
// archives only c read stay in layers/ until a sweep (Sweep, or gc's).
func Remove(st Store, c *record.Checkpoint) error {
	cps, bad, err := st.List()
	if err != nil {
		return err
	}
	g := st.readGraph(context.Background(), cps, bad)
	if g.nodes[c.ID] == nil {
		return fmt.Errorf("gc: %s cannot be read", c.ID)
	}
	_, err = st.removeBatch(context.Background(), g, []*record.Checkpoint{c})
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
func (st Store) removeBatch(ctx context.Context, g *graph, batch []*record.Checkpoint) (int64, error) {
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
	if err := st.dropIndex(); err != nil {
		return 0, err
	}
	for _, r := range todo {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := st.keepWhole(g, r); err != nil {
			return 0, err
		}
	}
	gone := slices.Clone(batch)
	slices.SortFunc(gone, func(a, b *record.Checkpoint) int { return record.CompareIDs(b.ID, a.ID) })
	var freed int64
	var trash []string
	var err error
	for _, c := range gone {
		freed += dirBytes(c.Dir, true)
		t := filepath.Join(st.stagingDir(), ".gc-"+c.ID)
		if err = durable.FaultOr("rename", c.Dir, func() error { return os.Rename(c.Dir, t) }); err != nil {
			// The older ones are left whole, for a newer one that stays
			// may build on them (see graph.refused).
			if err = st.removalRefused(c, err); !errors.As(err, new(*unremovableError)) {
				err = fmt.Errorf("gc: remove %s: %w", c.ID, err)
			}
			break
		}
		trash = append(trash, t)
		delete(g.nodes, c.ID)
	}
	if len(trash) > 0 {
		durable.SyncDir(st.checkpointsDir())
	}
	for _, t := range trash {
		if e := os.RemoveAll(t); e != nil && err == nil {
			err = e
		}
	}
	return freed, err
}

// keepWhole rewrites what one survivor needs rewritten (see removeBatch).
func (st Store) keepWhole(g *graph, r *rebase) error {
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
		n, err := st.readNode(c)
		if err != nil {
			return fmt.Errorf("gc: keep %s's snapshot chain whole: %w", c.ID, err)
		}
		r.n.parent, r.n.archives = n.parent, n.archives
	}
	if r.merge != nil {
		if err := st.mergeTranscript(c, r); err != nil {
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
func (st Store) sweepLayers(barrier string, g *graph) (int64, error) {
	if g == nil {
		cps, bad, err := st.List()
		if err != nil {
			return 0, err
		}
		g = st.readGraph(context.Background(), cps, bad)
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
	des, err := os.ReadDir(st.layersDir())
	if err != nil {
		return 0, nil
	}
	var freed int64
	for _, de := range des {
		id, ok := strings.CutSuffix(de.Name(), ".tar.gz")
		p := filepath.Join(st.layersDir(), de.Name())
		if !ok || !record.IsID(id) || record.CompareIDs(id, barrier) <= 0 || used[p] {
			continue
		}
		if fi, err := de.Info(); err == nil {
			freed += fi.Size()
		}
		os.Remove(p)
	}
	return freed, nil
}

// Sweep deletes the archives in layers/ that no checkpoint reads any more
// (see sweepLayers), reading every checkpoint's manifest, and returns the
// bytes freed.
func Sweep(st Store) (int64, error) { return st.sweepLayers("", nil) }

// mergeTranscript writes c's transcript as one file holding the batch's
// links it builds on (r.merge) and its own, and points its metadata at it.
func (st Store) mergeTranscript(c *record.Checkpoint, r *rebase) error {
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
	if err := st.WriteMetadata(c.Dir, &md); err != nil {
		os.Remove(merged)
		return err
	}
	c.Metadata = md
	return os.Remove(old)
}

// concatFiles writes the files srcs one after the other as the new file dst, durably.
func concatFiles(dst string, srcs ...string) error {
	return durable.Write(dst, layout.FileMode, func(w io.Writer) error {
		return ctxio.Concat(w, srcs...)
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
