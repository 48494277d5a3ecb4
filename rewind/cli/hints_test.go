package cli

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store"
	"rewind.dev/snap"
	"rewind.dev/snap/gitindex"
	"rewind.dev/snap/pathspec"
)

// TestHintOf: each of the store's and the tools' typed errors gets rewind's hint, in rewind's
// own commands and flags, and its exit status. A fork error never gets rewind-fork's flags.
func TestHintOf(t *testing.T) {
	const (
		forkInstead = "fork instead (without --in-place): a fork leaves the live transcript as it is, and can be made from the checkpoint's copy"
		runAgain    = "the transcript changed while it was read; run this again"
	)
	inPlace := func(err error) error {
		return &store.CutError{InPlace: true, Err: fmt.Errorf("truncate transcript t.jsonl: %w", err)}
	}
	forked := func(err error) error { return &store.CutError{Err: fmt.Errorf("fork transcript t.jsonl: %w", err)} }
	changed := &fork.ChangedError{Path: "t.jsonl", Offset: 3, Reason: "shorter"}
	for _, tc := range []struct {
		err  error
		want string
		code int
	}{
		{inPlace(&fork.ChangedError{Path: "t.jsonl", Offset: 3, Reason: "prefix_differs", InPlace: true}), forkInstead, 1},
		{&store.CutError{InPlace: true, Err: changed}, forkInstead, 1}, // a dry run's plan
		{inPlace(&fork.SnapshotError{Offset: 3, Short: true, Held: -1}), forkInstead, 1},
		{inPlace(&fork.ReplacedError{Path: "t.jsonl", Inode: 2, Want: 1}), forkInstead, 1},
		{inPlace(&fork.GrowingError{Path: "t.jsonl", Rounds: 8}), forkInstead, 1},
		{inPlace(&fork.ReplacedError{Path: "t.jsonl"}), "nothing was cut; run again, or fork instead", 1},
		{inPlace(&fork.MirrorError{Agent: "opencode", Path: "m.jsonl"}), "fork instead (without --in-place): the fork is loaded into the agent as a new session", 1},
		{forked(changed), runAgain, 1},
		{forked(&fork.SnapshotError{Offset: 3, Err: errors.New("differ")}), runAgain, 1},
		{forked(&fork.EmptyError{What: "user message"}), "cut later in the conversation (a smaller count for back), or start a new session", 1},
		{forked(&fork.ImportError{Session: "s", Out: "/f.json", Dir: "/p", Err: errors.New("x")}), "the fork is in /f.json; load it with 'opencode import /f.json' in /p", 1},
		{forked(&fork.AgentError{Agent: "x", Err: &jsonl.UnknownDialectError{Name: "x"}}), "use one of: " + strings.Join(jsonl.DialectNames(), ", "), 1},
		{forked(errors.New("disk full")), "", 1},
		{&gitindex.Error{Index: "i", Form: "f", Err: errors.New("x")}, "install git (it is asked for the index forms Rewind does not read), or run git there without them (git update-index --no-split-index)", 1},
		{&snap.LimitError{Limit: "max_depth"}, `leave it out with a pattern in a .rewindignore file, or raise "limits": {"max_depth": …} in the store's config.json (checkpoints record the limits they need)`, 1},
		{fmt.Errorf("%w (/p)", store.ErrNoStore), "run 'rewind init' in the project first", exitNoStore},
		{store.ErrNoCheckpoints, "run 'rewind save' or install the hooks ('rewind config --register-hooks')", 1},
		{fmt.Errorf("%w: held", store.ErrBusy), "let it finish and run this again (REWIND_LOCK_WAIT waits longer); if that process is stuck, end it", exitBusy},
		{&store.ProjectError{Path: "/x", Err: syscall.ENOENT}, "name an existing folder (-C DIR)", 1},
		{&store.ProjectError{Path: "/x"}, "name a folder (-C DIR)", 1},
		{&store.NoCheckpointError{Name: "@6", AtN: true, Visible: 6}, "@N counts the rows of 'rewind list'; restore backups ('rewind list --all') are named by id", 1},
		{&store.NoCheckpointError{Name: "2026"}, "'rewind list' shows them: name one by @N, id, pin label, description or :/TEXT", 1},
		{&store.NoCheckpointError{Name: "cache", Search: true}, "'rewind list' shows each checkpoint's prompt; a search ignores case and the spacing of words", 1},
		{&store.NoPromptError{Text: "cache", Searched: 3}, "'rewind list --grep TEXT' finds the checkpoints of every session; 'rewind restore :/TEXT' restores one", 1},
		{&snap.UnmatchedError{Items: []string{"x"}}, "'rewind diff CP --stat' lists the paths that differ; paths are relative to the current folder (:/PATH from the project's root), and ignored files are never restored", 1},
		{&snap.SelectionError{Path: "a/b", Outside: "a"}, "add that path to the paths restored, or move it aside; nothing was changed", 1},
		{&snap.LeftAloneError{Folder: "a", Path: "a/b", Reason: "unreadable"}, "nothing was changed; a restore never deletes or replaces a path it leaves alone, nor a folder that holds one", 1},
		{&pathspec.Error{Item: "../x", Reason: "it is outside the project"}, "paths are git's pathspecs: relative to the current folder, :/PATH from the project's root, :!PATH to leave out", 1},
		{store.ErrNothingToUndo, "'rewind list' shows the checkpoints", 1},
		{&store.NoTranscriptError{Checkpoint: "c"}, "restore the code only (--code-only), or pick another checkpoint", 1},
		{&store.DamagedError{Err: errors.New("x")}, "'rewind validate' lists the damage; restore another checkpoint ('rewind list')", 1},
		{&store.BackupError{Err: errors.New("x")}, "'rewind validate' lists the damage in the store; save again ('rewind save --full') before restoring", 1},
		{&store.CodeError{Checkpoint: "c", Backup: "b", Err: &snap.MountError{Path: "m", Mount: "m"}}, "unmount it and restore again, or restore the other paths only: rewind restore CP -- ':(top,exclude)m'", 1},
		{&snap.MountError{Path: "m/a", Mount: "m", ReadOnly: true}, "remount it read-write and restore again, or restore the other paths only: rewind restore CP -- ':(top,exclude)m'", 1},
		{&snap.MountError{Path: "m/a", Mount: "m", Err: errors.New("x")}, "make it writable and restore again, or restore the other paths only: rewind restore CP -- ':(top,exclude)m'", 1},
		{&store.CodeError{Checkpoint: "c", Backup: "b", Err: errors.New("x")}, "'rewind undo-restore' brings back the tree as it was (backup b)", 1},
		{&store.CodeError{Checkpoint: "c", Err: errors.New("x")}, "'rewind undo-restore' brings back the tree as it was", 1},
		{store.ErrNoRestoreToUndo, "'rewind forks list' and 'rewind list' show what exists", 1},
		{&store.RedoError{What: "restore to c", ID: "b"}, "'rewind undo-restore' reverts it; a redo only follows undo-restores", 1},
		{&store.RedoError{}, "'rewind redo' follows 'rewind undo-restore'", 1},
		{&store.ForkBackError{Path: "/f", Kept: "/k"}, "it is kept at /k; move it by hand", 1},
		{store.ErrNoTranscript, "pass --transcript PATH, or let the hooks record the session (rewind config --register-hooks)", 1},
		{&store.MissingTranscriptError{Path: "/t", Err: syscall.ENOENT}, "pass the session's file with --transcript PATH (the hooks record the current one in session.json)", 1},
		{&store.NoCheckpointBeforeError{N: 2, Prompt: "p"}, "rewind chat only (drop --both), or pick a checkpoint with 'rewind list' and 'rewind restore'", 1},
		{&store.FewerPromptsError{Have: 3, Want: 5, Compacted: true}, "go back at most 3, or restore an older checkpoint with 'rewind restore' (its transcript snapshot predates the compaction)", exitFewer},
		{&store.FewerPromptsError{Have: 3, Want: 5}, "'rewind-jsonl turns' lists them", exitFewer},
		{cmdline.WithHint(cmdline.Usagef("x"), "run 'rewind help'"), "run 'rewind help'", 2},
		{errors.New("plain"), "", 1},
	} {
		err := fmt.Errorf("wrapped: %w", tc.err)
		got := hintOf(err)
		if got != tc.want {
			t.Errorf("hintOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
		for _, other := range []string{"rewind-fork", "--snapshot", "--backup-dir"} {
			if strings.Contains(got, other) {
				t.Errorf("hintOf(%v) names rewind-fork's %s: %q", tc.err, other, got)
			}
		}
		if c := tool.ExitCode(t.Context(), err); c != tc.code {
			t.Errorf("exit status of %v = %d, want %d", tc.err, c, tc.code)
		}
	}
}
