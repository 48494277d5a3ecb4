package fork

import (
	"errors"
	"fmt"

	"rewind.dev/jsonl"
)

// The errors Create and Truncate return that a caller may act on. They say what is wrong and
// carry what a command needs to say what to do (the path, the offset, the check that failed);
// they never name a flag or a command: each command turns them into hints naming its own.

var (
	// ErrNoTranscript is CreateOptions.From or TruncateOptions.From left empty.
	ErrNoTranscript = errors.New("no transcript given")
	// ErrNoBackupDir is TruncateOptions.BackupDir left empty: Truncate never runs without a
	// verified backup.
	ErrNoBackupDir = errors.New("no backup directory given")
)

// ChangedError is a live transcript that no longer holds the checkpointed bytes before Offset.
type ChangedError struct {
	Path   string
	Offset int64
	// Reason is the check that failed: one of jsonl.Verification's reasons ("shorter",
	// "not_line_boundary", "prefix_differs", "tail_differs", "missing"), or "snapshot" when the
	// bytes differ from the checkpoint's snapshot of them.
	Reason string
	// InPlace: Truncate found it, and cut nothing; else Create found it, had no snapshot of the
	// bytes to fork from instead, and wrote nothing.
	InPlace bool
}

func (e *ChangedError) Error() string {
	switch {
	case e.InPlace && e.Reason == "snapshot":
		return fmt.Sprintf("transcript %s differs from the snapshot before the offset", e.Path)
	case e.InPlace:
		return fmt.Sprintf("transcript %s changed since the checkpoint: %s", e.Path, reasonText(e.Reason))
	}
	return fmt.Sprintf("transcript %s no longer holds the checkpointed bytes before offset %d: %s", e.Path, e.Offset, reasonText(e.Reason))
}

// SnapshotError is a checkpoint's snapshot (the inflated chain of transcript.jsonl.gz) that
// does not hold the checkpointed bytes before Offset.
type SnapshotError struct {
	Offset int64
	// Short: the snapshots end before Offset (Held bytes, when known, else -1): a chain given
	// without its older links, or the wrong file. Otherwise their bytes differ (Err says how).
	Short bool
	Held  int64
	Err   error
}

func (e *SnapshotError) Error() string {
	switch {
	case e.Short && e.Held >= 0:
		return fmt.Sprintf("snapshot holds %d bytes of transcript, fewer than the offset %d", e.Held, e.Offset)
	case e.Short:
		return fmt.Sprintf("snapshot ends before the offset %d: %v", e.Offset, e.Err)
	}
	return fmt.Sprintf("snapshot does not hold the checkpointed bytes before offset %d: %v", e.Offset, e.Err)
}

func (e *SnapshotError) Unwrap() error { return e.Err }

// ReplacedError is a transcript Truncate would cut that is no longer the file checkpointed
// (another inode), or was replaced while it was backed up (Inode 0). Nothing was cut.
type ReplacedError struct {
	Path        string
	Inode, Want uint64
}

func (e *ReplacedError) Error() string {
	if e.Inode == 0 {
		return fmt.Sprintf("transcript %s was replaced while truncating", e.Path)
	}
	return fmt.Sprintf("transcript %s is not the checkpointed file (inode %d, checkpoint had %d)", e.Path, e.Inode, e.Want)
}

// GrowingError is a transcript that kept growing while Truncate backed it up, for Rounds
// rounds: the agent is writing. Nothing was cut.
type GrowingError struct {
	Path   string
	Rounds int
}

func (e *GrowingError) Error() string {
	return fmt.Sprintf("transcript %s kept growing while it was backed up (%d rounds); nothing was cut", e.Path, e.Rounds)
}

// MirrorError is a Truncate of a transcript that is only Rewind's mirror of a session the
// agent keeps in its own database (OpenCode): cutting it would change nothing in the agent.
type MirrorError struct {
	Agent, Path string
}

func (e *MirrorError) Error() string {
	return fmt.Sprintf("%s keeps its sessions in its own database: %s is only Rewind's mirror, and cutting it changes nothing in the agent", e.Agent, e.Path)
}

// EmptyError is a fork that would keep none of what its agent needs to open it (What: "user
// message", …): the cut is before the conversation's first.
type EmptyError struct {
	Path string // the transcript
	What string
}

func (e *EmptyError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("the fork of %s would keep no %s", e.Path, e.What)
	}
	return fmt.Sprintf("the fork would keep no %s", e.What)
}

// ImportError is a fork written to Out that the agent did not load (OpenCode's import, run in
// Dir): the fork is there, to load by hand.
type ImportError struct {
	Session string // the session forked
	Out     string // the fork's export file
	Dir     string // the folder the import runs in ("." when the session names none)
	Err     error
}

func (e *ImportError) Error() string {
	return fmt.Sprintf("import the fork of OpenCode session %s: %v", e.Session, e.Err)
}

func (e *ImportError) Unwrap() error { return e.Err }

// AgentError is an agent named for the transcript that has no dialect (Err says which are
// known).
type AgentError struct {
	Agent string
	Err   error
}

func (e *AgentError) Error() string { return fmt.Sprintf("agent %q: %v", e.Agent, e.Err) }
func (e *AgentError) Unwrap() error { return e.Err }

// UnmovableError is an import of a session whose agent's transcript Rewind does not yet know
// how to move to another folder (its dialect names no working-folder fields).
type UnmovableError struct{ Agent string }

func (e *UnmovableError) Error() string {
	return fmt.Sprintf("import of %s sessions is not supported yet", e.Agent)
}

// dialectName is d's name, "an unknown agent's" when there is none.
func dialectName(d *jsonl.Dialect) string {
	if d == nil {
		return "an unknown agent's"
	}
	return d.Name
}
