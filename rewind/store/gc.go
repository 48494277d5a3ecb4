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
	"strconv"
	"strings"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/fileid"
	"rewind.dev/snap"
)

// GCOptions is a retention policy to apply once. Zero fields do not limit.
type GCOptions struct {
	Keep     int           // keep at least the newest Keep checkpoints, delete older ones
	MaxAge   time.Duration // delete checkpoints older than this
	MaxBytes int64         // delete the oldest until the store uses at most this
	DryRun   bool
	Budget   time.Duration // stop after this long (the rest continues next time); 0: no limit
}

// GCResult says what gc removed (or would remove) and what it freed.
type GCResult struct {
	Type       string   `json:"type"` // "gc"
	DryRun     bool     `json:"dry_run"`
	Removed    []string `json:"removed"`
	FreedBytes int64    `json:"freed_bytes"`
	Kept       int      `json:"kept"`
	Protected  []string `json:"protected,omitempty"` // would go by the policy, but pinned, needed by restore history, or perhaps by a damaged checkpoint
	// Damaged lists the checkpoints gc could not read (metadata or
	// manifest): what they need cannot be known, so nothing older than the
	// newest of them is deleted, nor any archive it might read.
	Damaged []string `json:"damaged,omitempty"`
	Partial bool     `json:"partial,omitempty"` // the time budget ran out
}

// GC deletes old checkpoints by the policy, never pinned ones, never ones
// the restore history refers to, and never the newest. A checkpoint whose
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
	start := time.Now()
	res := &GCResult{Type: "gc", DryRun: o.DryRun, Removed: []string{}}
	cps, _, err := s.List() // newest first
	if err != nil {
		return nil, err
	}
	h, err := s.History()
	if err != nil {
		return nil, err
	}
	ref := h.referenced()
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	res.Damaged = s.unreadable(ids)
	barrier := "" // the newest damaged id: nothing older goes
	if len(res.Damaged) > 0 {
		barrier = res.Damaged[len(res.Damaged)-1]
	}
	sizes := make([]int64, len(cps))
	var total int64
	for i, c := range cps {
		sizes[i] = dirBytes(c.Dir, false)
		total += sizes[i]
	}
	// Walk from the oldest; decide by the policy, keeping what must stay.
	for i := len(cps) - 1; i >= 1; i-- { // i == 0 is the newest: always kept
		c := cps[i]
		byKeep := o.Keep > 0 && i >= o.Keep
		byAge := o.MaxAge > 0 && time.Since(c.CreatedAt) > o.MaxAge
		byBytes := o.MaxBytes > 0 && total > o.MaxBytes
		if !byKeep && !byAge && !byBytes {
			continue
		}
		if c.Pinned != "" || ref[c.ID] || c.ID <= barrier {
			res.Protected = append(res.Protected, c.ID)
			continue
		}
		if o.Budget > 0 && time.Since(start) > o.Budget {
			res.Partial = true
			break
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		freed := dirBytes(c.Dir, true)
		if !o.DryRun {
			err := s.remove(c)
			if errors.Is(err, errNeeded) {
				res.Protected = append(res.Protected, c.ID)
				continue
			}
			if err != nil {
				return res, err
			}
		} else if s.removable(c) != nil {
			res.Protected = append(res.Protected, c.ID)
			continue
		}
		res.Removed = append(res.Removed, c.ID)
		res.FreedBytes += freed
		total -= sizes[i]
	}
	res.Kept = len(cps) - len(res.Removed)
	if !o.DryRun {
		defer func() {
			k := s.newChecker(ctx, false)
			k.prune()
			k.save()
		}()
		freed, err := s.sweepLayers(barrier)
		res.FreedBytes += freed
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// unreadable lists, oldest first, the checkpoints whose metadata or
// manifest cannot be read.
func (s *Store) unreadable(ids []string) []string {
	var out []string
	for _, id := range ids {
		if _, err := s.Load(id); err != nil {
			out = append(out, id)
			continue
		}
		if _, err := snap.ManifestArchives(filepath.Join(s.checkpointDir(id), ManifestFile)); err != nil {
			out = append(out, id)
		}
	}
	return out
}

// errNeeded means a checkpoint is kept: removing it would need a file that
// is damaged (the manifest a newer one's must be rewritten over, transcript
// bytes a newer one builds on).
var errNeeded = errors.New("kept: a newer checkpoint needs what cannot be read")

// removable reports why c cannot be removed without losing what a newer
// checkpoint needs: every file remove would read must read.
func (s *Store) removable(c *Checkpoint) error {
	cps, _, err := s.List()
	if err != nil {
		return err
	}
	cm := c.ManifestPath()
	for _, child := range cps {
		if child.ID <= c.ID {
			continue
		}
		if over, err := deltaOver(child, cm); err != nil || over {
			if err == nil {
				_, err = s.rebased(child, cm)
			}
			if err != nil {
				return fmt.Errorf("%w (%s's manifest: %v)", errNeeded, child.ID, err)
			}
		}
		if child.Transcript != nil && child.Transcript.Base == c.ID {
			if c.Transcript == nil || c.Transcript.Snapshot == "" {
				return fmt.Errorf("%w (%s's transcript builds on none)", errNeeded, child.ID)
			}
			for _, f := range []string{filepath.Join(c.Dir, c.Transcript.Snapshot), filepath.Join(child.Dir, child.Transcript.Snapshot)} {
				if _, err := os.Stat(f); err != nil {
					return fmt.Errorf("%w (%s's transcript: %v)", errNeeded, child.ID, err)
				}
			}
		}
	}
	return nil
}

// remove deletes one checkpoint. What newer checkpoints build on is kept
// whole first: a manifest that is a delta over this one's is rewritten over
// this one's parent (or in full), and a transcript that builds on this one's
// bytes gets them merged in. Everything those rewrites read is checked
// first (removable): when something is damaged the checkpoint is kept and
// errNeeded returned. Each file is replaced atomically, so a crash at any
// point leaves every chain readable. The folder is renamed out of
// checkpoints/ before it is deleted, so it is never listed half gone;
// archives in layers/ that nothing reads any more go in sweepLayers.
func (s *Store) remove(c *Checkpoint) error {
	c, err := s.Load(c.ID) // an earlier removal may have merged into it
	if err != nil {
		return err
	}
	if err := s.removable(c); err != nil {
		return err
	}
	cps, _, err := s.List()
	if err != nil {
		return err
	}
	cm := c.ManifestPath()
	for _, child := range cps {
		if child.ID <= c.ID {
			continue
		}
		if err := s.rebaseManifest(child, cm); err != nil {
			return fmt.Errorf("gc: keep %s's snapshot chain whole without %s: %w", child.ID, c.ID, err)
		}
		if child.Transcript == nil || child.Transcript.Base != c.ID {
			continue
		}
		if err := s.mergeTranscriptInto(c, child); err != nil {
			return fmt.Errorf("gc: keep %s's transcript for %s: %w", c.ID, child.ID, err)
		}
	}
	trash := filepath.Join(s.stagingDir(), ".gc-"+c.ID)
	if err := os.Rename(c.Dir, trash); err != nil {
		return fmt.Errorf("gc: remove %s: %w", c.ID, err)
	}
	durable.SyncDir(s.checkpointsDir())
	return os.RemoveAll(trash)
}

// deltaOver reports whether child's manifest is a delta over the manifest
// gone.
func deltaOver(child *Checkpoint, gone string) (bool, error) {
	f, err := os.Open(child.ManifestPath())
	if err != nil {
		return false, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return false, err
	}
	var hdr struct {
		Parent string `json:"parent"`
	}
	if err := json.Unmarshal([]byte(line), &hdr); err != nil {
		return false, err
	}
	return hdr.Parent != "" && filepath.Join(child.Dir, filepath.FromSlash(hdr.Parent)) == gone, nil
}

// rebased is child's manifest as it must be written without gone, its
// parent: over gone's own parent, or in full; and that parent.
func (s *Store) rebased(child *Checkpoint, gone string) (*snap.Manifest, error) {
	full, err := snap.ReadManifest(child.ManifestPath())
	if err != nil {
		return nil, err
	}
	goneM, err := snap.ReadManifest(gone)
	if err != nil {
		return nil, err
	}
	full.Header.Parent = ""
	if goneM.Header.Parent == "" {
		return full, nil
	}
	full.Header.Parent = goneM.Header.Parent
	return full, nil
}

// rebaseManifest rewrites child's manifest when it is a delta over gone (a
// manifest about to be deleted): over gone's own parent, or in full.
func (s *Store) rebaseManifest(child *Checkpoint, gone string) error {
	over, err := deltaOver(child, gone)
	if err != nil || !over {
		return err
	}
	full, err := s.rebased(child, gone)
	if err != nil {
		return err
	}
	var parent *snap.Manifest
	if full.Header.Parent != "" {
		if parent, err = snap.ReadManifest(full.Header.Parent); err != nil {
			return err
		}
	}
	return snap.WriteManifestFile(child.ManifestPath(), full, parent)
}

// sweepLayers deletes the archives in layers/ that no checkpoint reads from
// any more, and returns the bytes freed. It deletes only archives Rewind
// names (<id>.tar.gz), and none at or before barrier, the newest checkpoint
// it cannot read (which might read any of those). Call it under the lock (no
// save is writing one then).
func (s *Store) sweepLayers(barrier string) (int64, error) {
	ids, err := s.IDs()
	if err != nil {
		return 0, err
	}
	used := map[string]bool{}
	for _, id := range ids {
		arcs, err := snap.ManifestArchives(filepath.Join(s.checkpointDir(id), ManifestFile))
		if err != nil {
			if id > barrier {
				barrier = id
			}
			continue
		}
		for _, a := range arcs {
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
		if !ok || !isID(id) || id <= barrier || used[p] {
			continue
		}
		if fi, err := de.Info(); err == nil {
			freed += fi.Size()
		}
		os.Remove(p)
	}
	return freed, nil
}

func (s *Store) mergeTranscriptInto(parent, child *Checkpoint) error {
	name := "transcript." + strconv.FormatInt(time.Now().UnixNano(), 36) + ".jsonl.gz"
	merged := filepath.Join(child.Dir, name)
	if err := concatFiles(merged, filepath.Join(parent.Dir, parent.Transcript.Snapshot), filepath.Join(child.Dir, child.Transcript.Snapshot)); err != nil {
		return err
	}
	old := filepath.Join(child.Dir, child.Transcript.Snapshot)
	md := child.Metadata
	tr := *child.Transcript
	tr.Snapshot, tr.Base, tr.BaseOffset = name, parent.Transcript.Base, parent.Transcript.BaseOffset
	if tr.Chain > 1 {
		tr.Chain-- // parent's file and this one are one now
	}
	md.Transcript = &tr
	if err := writeMetadata(child.Dir, md); err != nil {
		os.Remove(merged)
		return err
	}
	child.Metadata = md
	return os.Remove(old)
}

// concatFiles writes the files srcs one after the other as the new file dst, durably.
func concatFiles(dst string, srcs ...string) error {
	return durable.Write(dst, 0o644, func(w io.Writer) error {
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

// ApplyRetention runs the configured policy within budget and records what
// it removed in hook-state.json; call it under the lock.
func (s *Store) ApplyRetention(ctx context.Context, budget time.Duration) (*GCResult, error) {
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	age, err := ParseAge(cfg.Retention.MaxAge)
	if err != nil {
		return nil, fmt.Errorf("config retention.max_age: %w", err)
	}
	res, err := s.gcLocked(ctx, GCOptions{Keep: cfg.Retention.MaxCheckpoints, MaxAge: age, MaxBytes: cfg.Retention.MaxBytes, Budget: budget})
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
