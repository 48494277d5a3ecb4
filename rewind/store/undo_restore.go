package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store/verify"
)

// Undo-restore and redo are one operation: undo an entry of the history. An
// undo-restore undoes the newest entry not undone yet (a restore, undo,
// back, revert or redo); a redo undoes the newest undo-restore, as long as
// nothing but redos came after it. Each records what it did to the tree
// (restored from the undone entry's backup, after a backup of its own), to
// a fork (moved aside, or back) and to a cut transcript (its earlier bytes
// put back, the current ones saved), so that it can be undone in turn. One
// function does both (undoEntry); UndoRestore and Redo are its two ends,
// each named as its command.

// ErrNothingToRedo means no undo-restore is there to redo.
var ErrNothingToRedo = errors.New("nothing to redo")

// UndoRestore undoes the newest restore that is not undone yet (a restore,
// undo, back, revert or redo): the tree comes back from its backup
// checkpoint, a fork it wrote is moved into transcript-backup/, a truncated
// transcript gets its bytes back. The current state is saved first, so Redo
// can put the restore back.
func (s *Store) UndoRestore(ctx context.Context, o UndoRestoreOptions) (*UndoRestoreResult, error) {
	return s.undoEntry(ctx, false, o)
}

// Redo undoes the newest undo-restore, as long as nothing but redos came
// after it: what the undo-restore undid comes back. The current state is
// saved first, so UndoRestore can undo the redo.
func (s *Store) Redo(ctx context.Context, o UndoRestoreOptions) (*UndoRestoreResult, error) {
	return s.undoEntry(ctx, true, o)
}

// UndoRestoreResult is what an undo-restore or a redo did (Kind says
// which).
type UndoRestoreResult struct {
	Type string      `json:"type"` // "restore"
	Kind RestoreKind `json:"kind"` // KindUndoRestore or KindRedo
	// Checkpoint is the backup the undone entry took: the tree comes back
	// from it.
	Checkpoint string `json:"checkpoint"`
	TreeChange
	// Resume tells how to open a fork a redo moved back.
	Resume string `json:"resume,omitempty"`
	// Entry is the history entry undone (its id): for a redo, the
	// undo-restore. What says in words what an undo-restore undoes or a
	// redo puts back.
	Entry string `json:"reverts,omitempty"`
	What  string `json:"reverts_what,omitempty"`
	// Moved are the files of a fork that an undo-restore moved aside or a
	// redo moved back (in a dry run, To is the folder they would go to).
	Moved []FileMove `json:"moved,omitempty"`
	// Transcript is a transcript that got its earlier bytes back.
	Transcript *Swap    `json:"transcript,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// UndoRestoreOptions say how an undo-restore or a redo goes.
type UndoRestoreOptions struct {
	DryRun bool // change nothing; say what would change
	// Expect, when set, is the entry a dry run found to undo or redo: when
	// the history has moved on since, nothing is done.
	Expect string
}

// undoEntry undoes an entry of the history: the newest restore not undone
// yet (an undo-restore), or with redo the newest undo-restore (a redo).
func (s *Store) undoEntry(ctx context.Context, redo bool, o UndoRestoreOptions) (*UndoRestoreResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	h, err := s.History()
	if err != nil {
		return nil, err
	}
	kind, idx := KindUndoRestore, h.undoTarget()
	if redo {
		kind, idx = KindRedo, h.redoTarget()
	}
	if idx < 0 {
		if redo {
			return nil, h.nothingToRedo()
		}
		return nil, ErrNoRestoreToUndo
	}
	e := h.Entries[idx]
	if o.Expect != "" && o.Expect != e.ID {
		return nil, fmt.Errorf("the restore history changed while you were asked (now %s would be reverted); nothing was done", e.What(&h))
	}
	backup, err := s.Load(e.BackupCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("the backup checkpoint of %s is gone: %w", e.What(&h), err)
	}
	res := &UndoRestoreResult{Type: "restore", Kind: kind, Checkpoint: backup.ID, TreeChange: TreeChange{DryRun: o.DryRun}, Entry: e.ID, What: e.What(&h)}
	if u := h.Entry(e.UndoOf); redo && u != nil {
		res.What = u.What(&h) // a redo puts back what the undo-restore undid
	}
	fk := e.Fork
	if fk == nil && e.Kind == KindUndoRestore {
		// Made before undo entries recorded the fork they moved: the reverted entry's record says.
		if u := h.Entry(e.UndoOf); u != nil && u.Fork != nil && u.Fork.Removed != "" {
			fk = u.Fork
		}
	}
	k := s.newChecker(ctx)
	defer k.Save()
	if e.Code {
		if err := k.Check(backup, verify.Code); err != nil {
			return nil, &DamagedError{Err: err}
		}
	}
	if o.DryRun {
		return res, s.planUndo(ctx, e, fk, backup, res)
	}
	c := change{
		backup: SaveOptions{Description: "before " + string(kind) + " of " + e.What(&h), UseSession: true,
			TranscriptPath: transcriptOf(backup), TranscriptBestEffort: true},
		entry: HistoryEntry{Kind: kind, UndoOf: e.ID, Checkpoint: backup.ID, Code: e.Code},
		conversation: func(rev *HistoryEntry) error {
			var err error
			if fk != nil {
				if rev.Fork, err = s.undoFork(fk, res); err != nil {
					return err
				}
			}
			if e.Truncate != nil {
				saved, err := s.untruncate(e.Truncate)
				if err != nil {
					return err
				}
				res.Transcript = &Swap{Path: e.Truncate.Path, From: e.Truncate.Backup, Saved: saved}
				if saved != "" {
					rev.Truncate = &TruncateRecord{Path: e.Truncate.Path, Backup: saved}
				}
			}
			return nil
		},
		done: func(h *History, rev HistoryEntry) {
			if r := h.Entry(e.ID); r != nil {
				r.UndoneBy = rev.ID
			}
		},
	}
	if e.Code {
		c.tree = backup
	}
	return applied(res, &res.TreeChange, s.apply(ctx, k, c, &res.TreeChange, &res.Warnings))
}

// undoTarget is the index of the entry undo-restore undoes: the newest not
// undone yet that is not itself an undo-restore; -1 when there is none.
func (h *History) undoTarget() int {
	for i := len(h.Entries) - 1; i >= 0; i-- {
		if e := h.Entries[i]; e.UndoneBy == "" && e.Kind != KindUndoRestore {
			return i
		}
	}
	return -1
}

// redoTarget is the index of the undo-restore a redo undoes: the newest
// one not redone, when only redos and undone entries came after it; -1
// otherwise (a new restore since the undo ends what can be redone, as in jj
// or an editor).
func (h *History) redoTarget() int {
	for i := len(h.Entries) - 1; i >= 0; i-- {
		e := h.Entries[i]
		switch {
		case e.Kind == KindUndoRestore && e.UndoneBy == "":
			return i
		case e.Kind == KindUndoRestore, e.Kind == KindRedo, e.UndoneBy != "":
			continue
		}
		return -1
	}
	return -1
}

// nothingToRedo says why there is nothing to redo.
func (h *History) nothingToRedo() error {
	for i := len(h.Entries) - 1; i >= 0; i-- {
		e := h.Entries[i]
		if e.Kind == KindUndoRestore || e.Kind == KindRedo || e.UndoneBy != "" {
			continue
		}
		if h.hasUndoBefore(i) {
			return &RedoError{What: e.What(h), ID: e.ID}
		}
		break
	}
	return &RedoError{}
}

func (h *History) hasUndoBefore(i int) bool {
	for ; i >= 0; i-- {
		if h.Entries[i].Kind == KindUndoRestore && h.Entries[i].UndoneBy == "" {
			return true
		}
	}
	return false
}

// undoFork undoes what an entry did to a fork: moves it aside into
// transcript-backup/ when the entry wrote it, back to its place when the
// entry moved it aside. It returns the record of what it did.
func (s *Store) undoFork(f *ForkRecord, res *UndoRestoreResult) (*ForkRecord, error) {
	rec := *f
	if dir := filepath.Dir(f.Path); filepath.Base(dir) == f.SessionID {
		return s.undoForkFolder(f, dir, res)
	}
	if f.Removed == "" {
		moved, err := s.moveAside(f.Path)
		if err != nil {
			return nil, err
		}
		if d, err := jsonl.LookupDialect(f.Agent); err == nil && d.Fork.Method == "opencode_import" {
			// The fork is a session in OpenCode's database, loaded from the export file that
			// moves aside: the session itself is the user's now, and stays.
			res.Warnings = append(res.Warnings, "OpenCode keeps the forked session "+f.SessionID+"; delete it in OpenCode if you do not want it")
		}
		if moved == "" {
			res.Warnings = append(res.Warnings, "the fork "+f.Path+" was gone already")
			return nil, nil
		}
		rec.Removed = moved
		res.Moved = append(res.Moved, FileMove{From: f.Path, To: moved})
		if side := sidecarOf(f.Path); fileExists(side) {
			if err := moveFile(side, sidecarOf(moved), layout.FileMode); err == nil {
				res.Moved = append(res.Moved, FileMove{From: side, To: sidecarOf(moved)})
			}
		}
		return &rec, nil
	}
	if !fileExists(f.Removed) {
		res.Warnings = append(res.Warnings, "the fork moved aside to "+f.Removed+" is gone; it was not brought back")
		return nil, nil
	}
	// Back beside its parent, with the parent's mode, as the fork was
	// written (private in the store meanwhile).
	if err := moveFile(f.Removed, f.Path, modeOf(f.ParentTranscript, layout.FileMode)); err != nil {
		return nil, &ForkBackError{Path: f.Path, Kept: f.Removed, Err: err}
	}
	res.Moved = append(res.Moved, FileMove{From: f.Removed, To: f.Path})
	sideMode := modeOf(sidecarOf(f.ParentTranscript), layout.FileMode)
	if side := sidecarOf(f.Removed); fileExists(side) && moveFile(side, sidecarOf(f.Path), sideMode) == nil {
		res.Moved = append(res.Moved, FileMove{From: side, To: sidecarOf(f.Path)})
	}
	res.Resume = ResumeHint(f.Agent, f.SessionID)
	rec.Removed = ""
	return &rec, nil
}

// undoForkFolder is undoFork for a fork that is a folder of its own (Copilot's
// session-state/<id>/, with its workspace.yaml): the folder moves, whole.
func (s *Store) undoForkFolder(f *ForkRecord, dir string, res *UndoRestoreResult) (*ForkRecord, error) {
	rec := *f
	if f.Removed == "" {
		if !fileExists(dir) {
			res.Warnings = append(res.Warnings, "the fork "+dir+" was gone already")
			return nil, nil
		}
		moved := filepath.Join(s.backupDir(), time.Now().UTC().Format("20060102_150405")+"-"+filepath.Base(dir))
		if err := os.Rename(dir, moved); err != nil {
			return nil, fmt.Errorf("move the fork %s aside: %w", dir, err)
		}
		// Closed to others in the store (as the fork made it); what is in it
		// keeps its modes, to go back as it came.
		os.Chmod(moved, layout.DirMode)
		rec.Removed = moved
		res.Moved = append(res.Moved, FileMove{From: dir, To: moved})
		return &rec, nil
	}
	if !fileExists(f.Removed) {
		res.Warnings = append(res.Warnings, "the fork moved aside to "+f.Removed+" is gone; it was not brought back")
		return nil, nil
	}
	if fileExists(dir) {
		return nil, &ForkBackError{Path: dir, Kept: f.Removed}
	}
	if err := os.Rename(f.Removed, dir); err != nil {
		return nil, &ForkBackError{Path: dir, Kept: f.Removed, Err: err}
	}
	res.Moved = append(res.Moved, FileMove{From: f.Removed, To: dir})
	res.Resume = ResumeHint(f.Agent, f.SessionID)
	rec.Removed = ""
	return &rec, nil
}

// sidecarOf is the settings file Droid keeps beside a session file.
func sidecarOf(p string) string { return strings.TrimSuffix(p, ".jsonl") + ".settings.json" }

// moveFile moves src to dst, with mode perm, never replacing a file at dst.
func moveFile(src, dst string, perm fs.FileMode) error {
	err := os.Link(src, dst)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists", dst)
	}
	if err == nil {
		if err := os.Chmod(dst, perm); err != nil {
			os.Remove(dst)
			return err
		}
	} else {
		if !errors.Is(err, syscall.EXDEV) && !errors.Is(err, syscall.EPERM) {
			return err
		}
		err := copyFile(src, dst, perm, durable.NoReplace)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists", dst)
		}
		if err != nil {
			return err
		}
	}
	durable.SyncDir(filepath.Dir(dst))
	return os.Remove(src)
}

// planUndo fills res with what undoing e would change, changing nothing.
func (s *Store) planUndo(ctx context.Context, e HistoryEntry, fk *ForkRecord, backup *Checkpoint, res *UndoRestoreResult) error {
	if e.Code {
		r, err := s.restoreTree(ctx, backup, true)
		if err != nil {
			return err
		}
		res.Code = r
	}
	switch {
	case fk != nil && fk.Removed == "" && fileExists(fk.Path):
		res.Moved = append(res.Moved, FileMove{From: fk.Path, To: s.backupDir() + string(filepath.Separator)})
	case fk != nil && fk.Removed != "" && fileExists(fk.Removed):
		res.Moved = append(res.Moved, FileMove{From: fk.Removed, To: fk.Path})
	}
	if e.Truncate != nil {
		res.Transcript = &Swap{Path: e.Truncate.Path, From: e.Truncate.Backup}
	}
	return nil
}

// untruncate gives a truncated transcript its bytes back: the current file
// (which may hold newer turns) is saved aside first, then the backup taken
// before the truncation replaces it atomically, with the current file's
// mode (the backup's is the store's). saved is where the current bytes went
// ("" when there was no file).
func (s *Store) untruncate(t *TruncateRecord) (saved string, err error) {
	perm := modeOf(t.Path, layout.FileMode)
	if fileExists(t.Path) {
		saved, err = s.keepAside(t.Path, "before-undo-"+filepath.Base(t.Path), false)
		if err != nil {
			return "", fmt.Errorf("save %s before undoing its truncation: %w", t.Path, err)
		}
	}
	// copyFile writes through a temporary name of its own and renames: no
	// fixed side name that a file of the user's could hold.
	if err := copyFile(t.Backup, t.Path, perm); err != nil {
		return saved, fmt.Errorf("bring back %s from %s: %w", t.Path, t.Backup, err)
	}
	return saved, nil
}
