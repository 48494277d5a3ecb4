package store

import (
	"errors"
	"fmt"

	"rewind.dev/jsonl"
)

// The store's errors that a command may act on. They say what is wrong and carry what the
// command needs to say what to do (the checkpoint, the path, the backup); they never name a
// flag or a command: rewind's hint-of-error switch (rewind/cli/hints.go) does.

var (
	// ErrNothingToUndo is undo on a tree that equals the only checkpoint.
	ErrNothingToUndo = errors.New("nothing to undo: the tree equals the only checkpoint")
	// ErrNoRestoreToUndo is undo-restore with no restore in the history left to revert.
	ErrNoRestoreToUndo = errors.New("no restore to undo")
	// ErrNoTranscript is back without a transcript given and none recorded for the project.
	ErrNoTranscript = errors.New("no transcript known for this project")
)

// ProjectError is a project folder that does not exist (Err says why) or is not a folder (Err
// nil).
type ProjectError struct {
	Path string
	Err  error
}

func (e *ProjectError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("project folder %s is not a folder", e.Path)
	}
	return fmt.Sprintf("project folder %s: %v", e.Path, e.Err)
}

func (e *ProjectError) Unwrap() error { return e.Err }

// NoCheckpointError is a checkpoint name that names none: an @N past the rows there are
// (Visible of them), a :/TEXT no checkpoint's prompt or description contains (Search), or a
// name that is no id, id prefix, pin label or description.
type NoCheckpointError struct {
	Name    string
	AtN     bool // an @N
	Visible int  // with AtN: the checkpoints @N counts (restore backups are not counted)
	Search  bool // a :/TEXT; Name is TEXT
}

func (e *NoCheckpointError) Error() string {
	switch {
	case e.Search:
		return fmt.Sprintf("no checkpoint's prompt or description contains %q", e.Name)
	case !e.AtN:
		return fmt.Sprintf("no checkpoint %q", e.Name)
	case e.Visible == 0:
		return fmt.Sprintf("no checkpoint %s: there are none but restore backups", e.Name)
	case e.Visible == 1:
		return fmt.Sprintf("no checkpoint %s: there is one (@0)", e.Name)
	}
	return fmt.Sprintf("no checkpoint %s: there are %d (@0 to @%d)", e.Name, e.Visible, e.Visible-1)
}

// NoPromptError is back :/TEXT where no prompt of the conversation contains Text; Searched
// prompts were in view, and Compacted says compaction hid older ones.
type NoPromptError struct {
	Text      string
	Searched  int
	Compacted bool
	Sessions  int // the sessions searched
}

func (e *NoPromptError) Error() string {
	of := "this conversation"
	if e.Sessions > 1 {
		of = fmt.Sprintf("the project's %d sessions", e.Sessions)
	}
	s := fmt.Sprintf("no prompt of %s contains %q (%d searched", of, e.Text, e.Searched)
	if e.Compacted {
		s += "; compaction hid the older ones"
	}
	return s + ")"
}

// NoTranscriptError is a chat restore from a checkpoint that holds no transcript.
type NoTranscriptError struct{ Checkpoint string }

func (e *NoTranscriptError) Error() string {
	return fmt.Sprintf("checkpoint %s holds no transcript (it was taken before the session wrote one)", e.Checkpoint)
}

// MissingTranscriptError is a transcript to go back in that does not exist.
type MissingTranscriptError struct {
	Path string
	Err  error // fs.ErrNotExist's errno
}

func (e *MissingTranscriptError) Error() string {
	return fmt.Sprintf("transcript %s: %v", e.Path, e.Err)
}
func (e *MissingTranscriptError) Unwrap() error { return e.Err }

// NoCheckpointBeforeError is back --both with no checkpoint of the conversation older than
// prompt N. Nothing was changed.
type NoCheckpointBeforeError struct {
	N      int
	Prompt string
}

func (e *NoCheckpointBeforeError) Error() string {
	return fmt.Sprintf("no checkpoint of this conversation is older than prompt %d (%q); nothing was changed", e.N, e.Prompt)
}

// FewerPromptsError is back asked to go further than the prompts in view.
type FewerPromptsError struct {
	Have, Want int
	Compacted  bool // compaction hid the older prompts
}

func (e *FewerPromptsError) Error() string {
	if e.Compacted {
		return fmt.Sprintf("only %d prompts are in view: the transcript was compacted past prompt %d", e.Have, e.Want)
	}
	return fmt.Sprintf("the conversation has %d prompts, fewer than %d", e.Have, e.Want)
}

// Is makes errors.Is(err, jsonl.ErrFewerPrompts) hold.
func (e *FewerPromptsError) Is(target error) bool { return target == jsonl.ErrFewerPrompts }

// DamagedError is a restore refused because its checkpoint is damaged. Nothing was changed.
type DamagedError struct{ Err error }

func (e *DamagedError) Error() string { return fmt.Sprintf("%v; nothing was changed", e.Err) }
func (e *DamagedError) Unwrap() error { return e.Err }

// BackupError is a restore's backup checkpoint that does not restore. Nothing was changed.
type BackupError struct{ Err error }

func (e *BackupError) Error() string {
	return fmt.Sprintf("the backup checkpoint does not restore, so nothing was changed: %v", e.Err)
}
func (e *BackupError) Unwrap() error { return e.Err }

// CodeError is a restore of the tree from Checkpoint that failed part way, after its backup
// Backup was taken: undoing the restore brings the tree back.
type CodeError struct {
	Checkpoint, Backup string
	Err                error
}

func (e *CodeError) Error() string {
	return fmt.Sprintf("restore the tree from %s: %v", e.Checkpoint, e.Err)
}
func (e *CodeError) Unwrap() error { return e.Err }

// CutError is a fork of a transcript, or a cut of it in place (InPlace), that failed, or that
// a dry run found would fail. Err is the fork package's error (fork.ChangedError, …).
type CutError struct {
	InPlace bool
	Err     error
}

func (e *CutError) Error() string { return e.Err.Error() }
func (e *CutError) Unwrap() error { return e.Err }

// RedoError is redo with nothing to put back: no undo-restore since the last restore, or
// After (What, ID) came after it.
type RedoError struct {
	What, ID string // the history entry after the last undo-restore; "" when there is none
}

func (e *RedoError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("%v: %s (%s) came after the last undo-restore", ErrNothingToRedo, e.What, e.ID)
	}
	return fmt.Sprintf("%v: no undo-restore to put back", ErrNothingToRedo)
}

// Is makes errors.Is(err, ErrNothingToRedo) hold.
func (e *RedoError) Is(target error) bool { return target == ErrNothingToRedo }

// ForkBackError is a fork an undo-restore moved aside that could not be brought back to Path:
// it is still at Kept.
type ForkBackError struct {
	Path, Kept string
	Err        error // nil: Path exists
}

func (e *ForkBackError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("bring the fork back to %s: it exists", e.Path)
	}
	return fmt.Sprintf("bring the fork back to %s: %v", e.Path, e.Err)
}
func (e *ForkBackError) Unwrap() error { return e.Err }
