package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store/verify"
	"rewind.dev/snap"
	"rewind.dev/snap/pathspec"
)

// Restore, undo, back, undo-restore, redo and revert change the project in one
// crash-safe sequence, written here once:
//
//  1. a backup checkpoint of the tree and transcript as they are, checked to
//     restore before anything changes (backup);
//  2. a history entry naming that backup, recorded not done;
//  3. the tree restored, then the conversation's part (a fork, a cut, a
//     fork moved aside or back, a transcript given its bytes back);
//  4. the entry recorded done, with what step 3 did.
//
// Killed anywhere after step 1, the history names the backup, and
// undo-restore (or redo, for an interrupted undo-restore) brings back the
// state before.

// change is what one of those commands does after its backup.
type change struct {
	backup SaveOptions        // how the backup checkpoint is taken
	entry  HistoryEntry       // recorded before anything changes; ID, At and BackupCheckpoint are filled in
	tree   *Checkpoint        // the tree is restored from it (nil: the tree is left alone)
	paths  *pathspec.Pathspec // when set, only the paths it selects are restored from tree
	// treeFrom, when set instead of tree, changes the tree once the backup
	// is taken, from what the backup holds (a revert merges into it).
	treeFrom func(backup *Checkpoint) (*snap.RestoreResult, error)
	// conversation does the rest, recording what it did in the entry; nil
	// for none.
	conversation func(e *HistoryEntry) error
	// done, when set, edits the history in the write that marks the entry
	// e done (an undo-restore or a redo marks the entry it undoes).
	done func(h *History, e HistoryEntry)
	// nothingIf, when set, says from the backup's tree whether the change
	// would change nothing: then it stops there (errNothing), and the
	// backup, recorded nowhere, is discarded.
	nothingIf func(backup *Checkpoint) bool
	// rewound, when set, is the session whose conversation goes on while the
	// change rewinds the code for a fork of it: it is told at its next hook
	// (noteRewound fills in the rest from the entry).
	rewound *layout.RewoundSession
}

// errNothing is a change that found, once its backup was taken, that it
// would change nothing (change.nothingIf).
var errNothing = errors.New("nothing to change")

// apply runs c's sequence, filling in res (the backup, what the tree
// became) and adding to warnings (nil: none is wanted); k checks the
// backup.
func (s *Store) apply(ctx context.Context, k *verify.Checker, c change, res *TreeChange, warnings *[]string) error {
	backup, err := s.backup(ctx, k, c.backup)
	if err != nil {
		return err
	}
	if c.nothingIf != nil && c.nothingIf(backup) {
		s.discard(backup)
		return errNothing
	}
	res.Backup = backup.ID
	e := c.entry
	e.ID, e.BackupCheckpoint, e.At, e.Done = backup.ID, backup.ID, time.Now().UTC(), false
	if err := s.appendHistory(e); err != nil {
		return err
	}
	if c.tree != nil || c.treeFrom != nil {
		var r *snap.RestoreResult
		from := e.Checkpoint
		if c.treeFrom != nil {
			r, err = c.treeFrom(backup)
		} else {
			r, err = s.restorePaths(ctx, c.tree, c.paths, false)
			from = c.tree.ID
		}
		if err != nil {
			// What the plan would have changed is not what the tree became:
			// a restore that failed reports no tree result, only its error
			// (and the backup that brings the tree back).
			if r != nil {
				r.Close()
			}
			if e.Kind == KindUndoRestore || e.Kind == KindRedo {
				return fmt.Errorf("restore the tree from %s: %w", from, err)
			}
			return &CodeError{Checkpoint: from, Backup: backup.ID, Err: err}
		}
		res.Code = r
	}
	if c.conversation != nil {
		err = c.conversation(&e)
	}
	e.Done = err == nil
	h, herr := s.History()
	if herr != nil {
		return firstErr(err, herr)
	}
	if old := h.Entry(e.ID); old != nil {
		*old = e
	} else {
		h.Entries = append(h.Entries, e)
	}
	if e.Done && c.done != nil {
		c.done(&h, e)
	}
	h.Version = Version
	if werr := writeJSON(s.historyPath(), h, layout.FileMode); werr != nil {
		return firstErr(err, werr)
	}
	if nerr := s.noteRewound(c, e); nerr != nil {
		// The restore is done and recorded; only a courtesy is lost.
		if warnings != nil {
			*warnings = append(*warnings, fmt.Sprintf("the session this left behind will not be told: %v", nerr))
		}
	}
	return err
}

// applied is apply's result as the commands return it: no result when
// nothing changed (the backup failed, so tc names none), else res with the
// error. tc is res's TreeChange.
func applied[R any](res *R, tc *TreeChange, err error) (*R, error) {
	if err != nil && tc.Backup == "" {
		return nil, err
	}
	return res, err
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// backup takes the checkpoint a change starts from, and makes sure it
// restores before anything changes.
func (s *Store) backup(ctx context.Context, k *verify.Checker, o SaveOptions) (*Checkpoint, error) {
	o.Trigger = Trigger{Kind: TriggerPreRestore}
	backup, err := s.SaveLocked(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("backup checkpoint before restoring: %w", err)
	}
	k.Refresh()
	if err := k.Check(backup, verify.All); err != nil {
		return nil, &BackupError{Err: err}
	}
	// What the backup's walk held is garbage now, and the restore walks the
	// tree again: given back first, the two do not stack up in the
	// process's memory (at 1M files, 119 MiB; each alone, under 97).
	debug.FreeOSMemory()
	return backup, nil
}

// discard removes c, the newest checkpoint, taken under this lock and
// recorded nowhere (a backup a restore turned out not to need). Its folder
// leaves checkpoints/ in one rename, through staging/; a run killed after it
// leaves an archive in layers/ newer than every checkpoint, which the next
// save removes (cleanStaging), and an index line the next retention finds
// stale and rebuilds.
func (s *Store) discard(c *Checkpoint) {
	aside := filepath.Join(s.stagingDir(), c.ID)
	if err := os.Rename(c.Dir, aside); err != nil {
		return // (then it stays, a hidden checkpoint of the tree as it is)
	}
	durable.SyncDir(s.checkpointsDir())
	os.RemoveAll(aside)
	os.Remove(filepath.Join(s.layersDir(), c.ID+".tar.gz"))
}
