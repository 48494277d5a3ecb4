package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store/record"
	"rewind.dev/rewind/store/verify"
	"rewind.dev/snap"
)

// SaveOptions say what a checkpoint records.
type SaveOptions struct {
	Description string
	Trigger     Trigger
	Pin         string // pin with this label at creation (see Pin: it moves no label)

	// TranscriptPath is the agent transcript to capture; when empty and
	// UseSession is set, session.json's is used; else none.
	TranscriptPath string
	Agent          string
	SessionID      string
	UseSession     bool

	// SkipUnchanged makes Save return ErrUnchanged instead of a checkpoint
	// whose tree equals the newest one (tool-triggered checkpoints).
	SkipUnchanged bool
	// Full writes a full snapshot instead of a layer over the newest
	// checkpoint.
	Full bool
	// TranscriptBestEffort takes the checkpoint of the tree even when the
	// transcript cannot be read (hooks, a restore's backup): the metadata
	// says why it holds none. Without it such a transcript fails the save.
	TranscriptBestEffort bool
	// TranscriptRefused, when set, is why the caller would not read the
	// transcript it was told of (a hook's, outside the agent's folders):
	// the checkpoint records it and captures none.
	TranscriptRefused string

	// adopt, for the first checkpoint of a tree just restored from a full
	// snapshot archive (an import), is that archive indexed: it becomes the
	// checkpoint's snapshot instead of the tree being compressed again.
	adopt *snap.ArchiveIndex
}

// ErrUnchanged is returned by Save with SkipUnchanged when the tree has not
// changed since the newest checkpoint.
var ErrUnchanged = errors.New("tree unchanged since the newest checkpoint")

// Save takes a checkpoint under the store lock.
func (s *Store) Save(ctx context.Context, opts SaveOptions) (*Checkpoint, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return s.SaveLocked(ctx, opts)
}

// SaveLocked takes a checkpoint; the caller holds the lock. The checkpoint
// is built in staging/<id> and renamed into checkpoints/ once its metadata
// is written, so it appears whole or not at all. In project mode it first
// makes sure git ignores the store (excludeFromGit) and git clean leaves it
// alone (guardFromClean).
func (s *Store) SaveLocked(ctx context.Context, opts SaveOptions) (*Checkpoint, error) {
	if opts.Pin != "" {
		if err := s.checkNewLabel(opts.Pin); err != nil {
			return nil, err
		}
	}
	s.cleanStaging()
	if s.Mode == layout.ModeProject {
		// The store out of git, whatever came first, git init or rewind
		// init: a few reads when it is (best effort: a save, a hook's above
		// all, does not fail for a .git it may not write; init says so).
		excludeFromGit(s.Project)
		s.guardFromClean() // (a store made before the guard gets it; one Lstat after)
	}
	newest, err := s.Newest()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	id := s.newID(now)
	stage := filepath.Join(s.stagingDir(), id)
	if err := os.MkdirAll(stage, layout.DirMode); err != nil {
		return nil, fmt.Errorf("create staging folder in %s: %w", s.Dir, err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(stage)
		}
	}()

	k := s.newChecker(ctx)
	layerFile := filepath.Join(s.layersDir(), id+".tar.gz")
	res, parent, fullBecause, err := s.snapshotTree(ctx, newest, opts, stage, layerFile, k)
	if err != nil {
		return nil, err
	}
	if res.Archive != "" {
		defer func() {
			if !ok {
				os.Remove(layerFile)
			}
		}()
	}
	if res.Unchanged && opts.SkipUnchanged {
		return nil, ErrUnchanged
	}
	md := Metadata{
		Version: Version, ID: id, CreatedAt: now.UTC(), Description: opts.Description, Trigger: opts.Trigger, Pinned: opts.Pin,
		Snapshot: snapshotRecord(res, fullBecause),
	}
	if res.Unchanged && parent != nil && !opts.Full {
		md.Snapshot.ReusedFrom = newest.ID
		if newest.Snapshot.ReusedFrom != "" {
			md.Snapshot.ReusedFrom = newest.Snapshot.ReusedFrom
		}
	}
	if err := stageSnapshot(stage, res, parent); err != nil {
		return nil, err
	}
	if md.Changes, err = s.changesSince(parent, res, stage); err != nil {
		return nil, err
	}
	if newest != nil {
		md.Changes.Since = newest.ID
	}
	if md.Transcript, err = s.stageTranscript(ctx, stage, opts, k); err != nil {
		return nil, err
	}
	md.HasTranscript = md.Transcript != nil && md.Transcript.Snapshot != ""
	final, err := s.publish(stage, &md)
	if err != nil {
		return nil, err
	}
	ok = true
	// What this save wrote is known whole: a restore need not read it again
	// (a reused manifest is a link to one just checked).
	k.Record(filepath.Join(final, ManifestFile), "")
	if res.Archive != "" {
		k.Record(layerFile, "")
	}
	if md.HasTranscript {
		k.Record(filepath.Join(final, md.Transcript.Snapshot), "")
	}
	k.Save()
	c := &Checkpoint{Metadata: md, Dir: final}
	s.forGC().IndexSaved(c, newest)
	return c, nil
}

// checkNewLabel refuses a pin label that is not one, or that another checkpoint holds.
func (s *Store) checkNewLabel(label string) error {
	if err := CheckLabel(label); err != nil {
		return err
	}
	_, err := s.labelHolders("", PinOptions{Label: label})
	return err
}

// changesSince counts what the saved snapshot res changed over its parent's manifest: every
// file and symlink added when it has none (a full snapshot; folders do not count).
func (s *Store) changesSince(parent *snap.Manifest, res *snap.Result, stage string) (Changes, error) {
	if parent == nil {
		return Changes{Added: res.Files + res.Symlinks}, nil
	}
	cur := res.Manifest
	if cur.File == filepath.Join(stage, ManifestFile) { // written as the walk went (snap.CreateOptions.ManifestTo): read as it is compared
		var err error
		if cur, err = snap.OpenManifest(cur.File); err != nil {
			return Changes{}, err
		}
	}
	return countChanges(parent, cur, snap.ProbeFolding(s.Project))
}

// snapshotTree takes the snapshot of a save, into layerFile and stage: a layer over the
// newest checkpoint where one applies (see layerOver), else a full snapshot, or for an import
// the bundle's archive adopted where it holds the tree. It returns the snapshot, the parent's
// manifest it was compared with (nil for a full one) and, when the save had to be full, why.
func (s *Store) snapshotTree(ctx context.Context, newest *Checkpoint, opts SaveOptions, stage, layerFile string, k *verify.Checker) (res *snap.Result, parent *snap.Manifest, fullBecause string, err error) {
	res, parent, err = s.layerOver(ctx, newest, opts, layerFile, k)
	if err != nil {
		return nil, nil, "", err
	}
	if res == nil && opts.adopt == nil {
		// A full checkpoint (the first, --full, over a damaged chain or one
		// that takes no more layers): its archive and manifest are written
		// as the tree is walked, not held, while the newest checkpoint's
		// chain is read and checked.
		parentc := s.checkParent(newest, k)
		walk, err := s.walkOptions()
		if err == nil {
			res, err = snap.Create(ctx, s.Project, snap.CreateOptions{Walk: walk, Out: layerFile, Limits: s.Limits(), ManifestTo: filepath.Join(stage, ManifestFile)})
		}
		p := <-parentc
		if err != nil {
			return nil, nil, "", fmt.Errorf("snapshot %s: %w", s.Project, err)
		}
		parent = p.m
		if p.damage != nil {
			parent = nil
			fullBecause = (&DamageError{Checkpoint: newest.ID, Err: p.damage}).Error()
		}
	}
	if res == nil { // an import: the archive is adopted where it holds the tree
		tree, p, damage, err := s.walkBesideParent(ctx, newest, k)
		if err != nil {
			return nil, nil, "", err
		}
		parent = p
		base := parent
		switch {
		case damage != nil:
			parent, base = nil, nil
			fullBecause = (&DamageError{Checkpoint: newest.ID, Err: damage}).Error()
		case opts.Full:
			base = nil // --full: nothing of the newest checkpoint is linked or layered on
		}
		err = snap.ErrNotAdoptable
		if parent == nil && damage == nil {
			res, err = snap.Create(ctx, s.Project, snap.CreateOptions{Tree: tree, Adopt: opts.adopt, Out: layerFile, Limits: s.Limits()})
		}
		if errors.Is(err, snap.ErrNotAdoptable) {
			res, err = snap.Create(ctx, s.Project, snap.CreateOptions{
				Tree: tree, Out: layerFile, Parent: base, Layer: !opts.Full, Reuse: !opts.Full, Limits: s.Limits(),
			})
		}
		if err != nil {
			return nil, nil, "", fmt.Errorf("snapshot %s: %w", s.Project, err)
		}
	}
	return res, parent, fullBecause, nil
}

// layerOver takes the snapshot of a save that lays a layer over the newest
// checkpoint, comparing the tree with it as the walk goes (snap.Create
// without a Tree: the tree is not held), while the newest checkpoint's chain is checked.
// It returns a nil Result where such a save does not apply (no checkpoint,
// --full, an import, a chain that takes no more layers, a tree that
// differs from it in too many entries: snap.ErrLayerTooBig) or the chain
// is damaged: the caller then takes a full checkpoint.
func (s *Store) layerOver(ctx context.Context, newest *Checkpoint, opts SaveOptions, layerFile string, k *verify.Checker) (*snap.Result, *snap.Manifest, error) {
	if newest == nil || opts.Full || opts.adopt != nil {
		return nil, nil, nil
	}
	walk, err := s.walkOptions()
	if err != nil {
		return nil, nil, err
	}
	parent, damage := verify.Snapshot(newest)
	if damage != nil || !parent.LayerFits(0) {
		// A damaged chain, or one that is at its depth or has outgrown its
		// full snapshot: the save is a full one, written as it walks.
		return nil, nil, nil
	}
	checked := make(chan error, 1)
	go func() { checked <- k.CheckSnapshot(parent) }() // read only where the verified file does not vouch
	res, err := snap.Create(ctx, s.Project, snap.CreateOptions{
		Walk: walk, Out: layerFile, Parent: parent, Layer: true, Reuse: true, Limits: s.Limits(),
	}.WithLayerMost(s.layerMost))
	if damage := <-checked; damage != nil {
		if err == nil && res.Archive != "" {
			os.Remove(layerFile)
		}
		return nil, nil, nil
	}
	if errors.Is(err, snap.ErrLayerTooBig) {
		// Most of the tree changed: a layer would be held whole to be
		// written; a full checkpoint is written as the walk goes, what
		// this walk held given back first.
		debug.FreeOSMemory()
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot %s: %w", s.Project, err)
	}
	return res, parent, nil
}

// parentChecked is the newest checkpoint's manifest, opened, or where its
// chain is damaged, why (then nothing may be built on it).
type parentChecked struct {
	m      *snap.Manifest
	damage error
}

// checkParent opens the newest checkpoint's manifest and checks its chain
// in a goroutine (read only where the verified file does not vouch), for a
// save that walks the tree meanwhile; nil newest: no parent.
func (s *Store) checkParent(newest *Checkpoint, k *verify.Checker) <-chan parentChecked {
	parentc := make(chan parentChecked, 1)
	go func() {
		var p parentChecked
		if newest != nil {
			if p.m, p.damage = verify.Snapshot(newest); p.damage == nil {
				p.damage = k.CheckSnapshot(p.m)
			}
		}
		parentc <- p
	}()
	return parentc
}

// walkBesideParent walks the project while the newest checkpoint's chain
// is checked (checkParent). It returns the parent's manifest, or, where
// the chain is damaged, why.
func (s *Store) walkBesideParent(ctx context.Context, newest *Checkpoint, k *verify.Checker) (tree *snap.Tree, parent *snap.Manifest, damage error, err error) {
	walk, err := s.walkOptions()
	if err != nil {
		return nil, nil, nil, err
	}
	parentc := s.checkParent(newest, k)
	if newest != nil {
		walk.Entries = newest.Snapshot.Files + newest.Snapshot.Dirs + newest.Snapshot.Symlinks
	}
	tree, err = snap.Walk(ctx, s.Project, walk)
	p := <-parentc
	if err != nil {
		return nil, nil, nil, fmt.Errorf("snapshot %s: %w", s.Project, err)
	}
	return tree, p.m, p.damage, nil
}

// snapshotRecord is what a checkpoint's metadata says of its snapshot.
func snapshotRecord(res *snap.Result, fullBecause string) Snapshot {
	return Snapshot{Files: res.Files, Dirs: res.Dirs, Symlinks: res.Symlinks, Bytes: res.Bytes,
		CompressedBytes: res.CompressedBytes, TreeHash: res.TreeHash, Layer: res.Layer, Depth: res.Depth, LayerFiles: res.LayerFiles,
		Unreadable: res.Unreadable, FullBecause: fullBecause}
}

// stageSnapshot puts the snapshot's archive and manifest in the staged
// checkpoint folder. The archive lives in layers/; the checkpoint folder
// holds a hard link, so both the documented layout and gc's pool work. A
// reused snapshot links the newest checkpoint's archive and manifest: its
// paths are relative to a checkpoint folder, so it reads the same from here.
func stageSnapshot(stage string, res *snap.Result, parent *snap.Manifest) error {
	archive := res.Manifest.Header.Archive
	if err := linkOrCopy(archive, filepath.Join(stage, SnapshotFile)); err != nil {
		return fmt.Errorf("link snapshot %s: %w", archive, err)
	}
	if res.Reused {
		if err := linkOrCopy(res.Manifest.File, filepath.Join(stage, ManifestFile)); err != nil {
			return fmt.Errorf("link manifest %s: %w", res.Manifest.File, err)
		}
		return nil
	}
	if res.Manifest.File == filepath.Join(stage, ManifestFile) {
		return nil // written as the tree was walked (snap.CreateOptions.ManifestTo)
	}
	var layerParent *snap.Manifest
	if res.Layer {
		layerParent = parent
	}
	err := durable.Write(filepath.Join(stage, ManifestFile), layout.FileMode, func(w io.Writer) error {
		return res.Manifest.Encode(w, stage, layerParent)
	}, durable.Staged)
	if err != nil {
		return fmt.Errorf("write manifest in %s: %w", stage, err)
	}
	return nil
}

// stageTranscript captures the transcript the options name (or the
// session's) into the staged checkpoint folder; nil when there is none.
// An unreadable transcript fails the save unless TranscriptBestEffort,
// when the record says why it holds no snapshot.
func (s *Store) stageTranscript(ctx context.Context, stage string, opts SaveOptions, k *verify.Checker) (*Transcript, error) {
	tpath, agent, session := opts.TranscriptPath, opts.Agent, opts.SessionID
	if opts.TranscriptRefused != "" {
		return &Transcript{Agent: agent, SessionID: session, Problem: opts.TranscriptRefused}, nil
	}
	if tpath == "" && opts.UseSession {
		sess, err := s.LastSession()
		var foreign *jsonl.ForeignPathError
		switch {
		case errors.As(err, &foreign) && opts.TranscriptBestEffort:
			return &Transcript{Agent: foreign.Agent, Problem: err.Error()}, nil
		case errors.As(err, &foreign):
			return nil, err
		case err == nil && sess.TranscriptPath != "":
			tpath, session = sess.TranscriptPath, sess.SessionID
			if agent == "" {
				agent = sess.Agent
			}
		}
	}
	if tpath == "" {
		return nil, nil
	}
	tpath = realPath(tpath)
	tr, err := s.captureTranscript(ctx, stage, tpath, agent, session, k)
	var unread *unreadableTranscript
	if errors.As(err, &unread) && opts.TranscriptBestEffort {
		return &Transcript{Agent: agent, OriginalPath: tpath, SessionID: session, Problem: unread.Error()}, nil
	}
	return tr, err
}

// publish writes the metadata into the staged folder and renames it into
// checkpoints/, where it appears whole (md.Sum set to its checksum); it
// returns the checkpoint's folder.
func (s *Store) publish(stage string, md *Metadata) (string, error) {
	mb, err := record.Encode(md)
	if err != nil {
		return "", err
	}
	if err := durable.WriteFile(filepath.Join(stage, MetadataFile), mb, layout.FileMode, durable.Staged); err != nil {
		return "", fmt.Errorf("write metadata in %s: %w", stage, err)
	}
	// The layer's folder was synced when the layer was committed.
	if err := durable.SyncDir(stage); err != nil {
		return "", err
	}
	final := s.checkpointDir(md.ID)
	if err := os.Rename(stage, final); err != nil {
		return "", fmt.Errorf("publish checkpoint %s: %w", md.ID, err)
	}
	// The checkpoint is published: a failure to sync the folder now only
	// weakens how the rename survives a power cut, and must not make the
	// caller (a restore taking its backup) believe there is no backup.
	durable.SyncDir(s.checkpointsDir())
	return final, nil
}

// cleanStaging removes what an interrupted run left behind: everything in
// staging/, the temporary files of killed writes (durable.Sweep) in the
// store, layers/ and transcript-backup/, and layer archives newer than the
// newest checkpoint (ids only grow, so such a layer belongs to a save that
// never published). It runs under the lock, so none of it belongs to a live
// run of this store; a temporary file another process still writes (a
// standalone rewind-fork writing a backup here) is flock-held and stays.
func (s *Store) cleanStaging() {
	os.MkdirAll(s.layersDir(), layout.DirMode) // stores made before layers have none
	if des, err := os.ReadDir(s.stagingDir()); err != nil {
		os.MkdirAll(s.stagingDir(), layout.DirMode)
	} else {
		for _, de := range des {
			os.RemoveAll(filepath.Join(s.stagingDir(), de.Name()))
		}
	}
	for _, dir := range []string{s.Dir, s.layersDir(), s.backupDir()} {
		durable.Sweep(dir)
	}
	ids, _ := s.IDs()
	newest := ""
	if len(ids) > 0 {
		newest = ids[len(ids)-1]
	}
	des, _ := os.ReadDir(s.layersDir())
	for _, de := range des {
		if id, ok := strings.CutSuffix(de.Name(), ".tar.gz"); ok && isID(id) && CompareIDs(id, newest) > 0 {
			os.Remove(filepath.Join(s.layersDir(), de.Name()))
		}
	}
}

// countChanges compares two manifests (both in walk order, either opened
// with snap.OpenManifest) taken on a file system that compares names as
// fold says; folders do not count, and a file whose name changed only in
// case counts as modified.
func countChanges(old, cur *snap.Manifest, fold snap.Folding) (Changes, error) {
	n, err := snap.CountChanges(old, cur, fold)
	return Changes{Added: n.Added, Deleted: n.Deleted, Modified: n.Modified}, err
}

// linkOrCopy hard-links src, a file of the store, at dst, or copies it
// where links do not work.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return copyFile(src, dst, layout.FileMode)
}
