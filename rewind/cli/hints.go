package cli

import (
	"errors"
	"fmt"
	"strings"

	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store"
	"rewind.dev/rewind/store/bundle"
	"rewind.dev/snap"
	"rewind.dev/snap/gitindex"
	"rewind.dev/snap/pathspec"
)

// Exit statuses of rewind's own that scripts may branch on (rewind(1), EXIT STATUS); 0, 1, 2
// and 130 are cmdline's.
const (
	exitNoStore  = 10
	exitBusy     = 11
	exitFewer    = 12
	exitConflict = 13
)

// exitCode gives rewind's own exit statuses for the store's errors.
func exitCode(err error) int {
	switch {
	case errors.Is(err, store.ErrNoStore):
		return exitNoStore
	case errors.Is(err, store.ErrBusy):
		return exitBusy
	case errors.Is(err, jsonl.ErrFewerPrompts):
		return exitFewer
	case errors.As(err, new(*store.ConflictError)):
		return exitConflict
	}
	return 0
}

// hintOf is rewind's hint-of-error switch: what to do about the store's and the tools' errors,
// in rewind's own commands and flags (never rewind-fork's: rewind passes those itself). It is
// long by design: one case per error, in the order they are tested, so that every hint is read
// and worded in one place.
func hintOf(err error) string {
	var (
		le      *snap.LimitError
		ie      *gitindex.Error
		cut     *store.CutError
		project *store.ProjectError
		nocp    *store.NoCheckpointError
		code    *store.CodeError
		redo    *store.RedoError
		forkBk  *store.ForkBackError
		fewer   *store.FewerPromptsError
		clash   *store.ConflictError
		label   *store.LabelError
		gone    *GoneError
		mnt     *snap.MountError
	)
	var untrusted *store.UntrustedStoreError
	switch {
	case errors.As(err, &untrusted):
		return untrusted.Fix
	case errors.As(err, new(*store.ModeError)):
		var me *store.ModeError
		errors.As(err, &me)
		return fmt.Sprintf("'rewind store move %s' moves it there, checkpoints and all", me.Want)
	case errors.As(err, new(*snap.TrackedStoreError)):
		return "take it out of the repository (git rm -r --cached .agent/rewind, and commit), then check that .agent/rewind/ holds only what your Rewind wrote: its session.json, config.json and checkpoints may be someone else's"
	case errors.As(err, &cut):
		return cutHint(cut)
	case errors.As(err, &clash) && clash.Markers:
		return "resolve the markers by hand; 'rewind undo-restore' takes the revert back"
	case errors.As(err, &clash):
		return "resolve them by hand, or write git-style markers into the conflicting text files: rewind revert " + clash.Checkpoint + " --conflicts=markers"
	case errors.As(err, new(*snap.UnmatchedError)):
		return "'rewind diff CP --stat' lists the paths that differ; paths are relative to the current folder (:/PATH from the project's root), and ignored files are never restored"
	case errors.As(err, new(*snap.SelectionError)):
		return "add that path to the paths restored, or move it aside; nothing was changed"
	case errors.As(err, new(*snap.LeftAloneError)):
		return "nothing was changed; a restore never deletes or replaces a path it leaves alone, nor a folder that holds one"
	case errors.As(err, new(*pathspec.Error)), errors.Is(err, pathspec.ErrEmpty):
		return "paths are git's pathspecs: relative to the current folder, :/PATH from the project's root, :!PATH to leave out"
	case errors.As(err, &ie):
		return "install git (it is asked for the index forms Rewind does not read), or run git there without them (git update-index --no-split-index)"
	case errors.As(err, &le):
		return fmt.Sprintf("leave it out with a pattern in a .rewindignore file, or raise \"limits\": {\"%s\": …} in the store's config.json (checkpoints record the limits they need)", le.Limit)
	case errors.Is(err, store.ErrNoStore):
		return "run 'rewind init' in the project first"
	case errors.As(err, new(*store.ExistsError)):
		return "name another file (-o FILE), or replace it with --force"
	case errors.As(err, &label):
		return labelHint(label)
	case errors.As(err, &gone):
		return gone.hint()
	case errors.As(err, new(*store.NotEmptyError)):
		return "import into a new folder (--into DIR), or add --force to import over it after a backup checkpoint ('rewind undo-restore' brings it back)"
	case errors.As(err, new(*bundle.Error)):
		return "export the checkpoint again; the archive must reach here as 'rewind export' wrote it"
	case errors.As(err, new(*store.UnsupportedAgentError)):
		return "resume the conversation on the machine it came from, or open the transcript by hand"
	case errors.Is(err, store.ErrNoCheckpoints):
		return "run 'rewind save' or install the hooks ('rewind config --register-hooks')"
	case errors.Is(err, store.ErrBusy):
		return "let it finish and run this again (REWIND_LOCK_WAIT waits longer); if that process is stuck, end it"
	case errors.As(err, &project) && project.Err != nil:
		return "name an existing folder (-C DIR)"
	case errors.As(err, &project):
		return "name a folder (-C DIR)"
	case errors.As(err, &nocp) && nocp.Search:
		return "'rewind list' shows each checkpoint's prompt; a search ignores case and the spacing of words"
	case errors.As(err, new(*store.NoPromptError)):
		return "'rewind list --grep TEXT' finds the checkpoints of every session; 'rewind restore :/TEXT' restores one"
	case errors.As(err, &nocp) && nocp.AtN:
		return "@N counts the rows of 'rewind list'; restore backups ('rewind list --all') are named by id"
	case errors.As(err, &nocp):
		return "'rewind list' shows them: name one by @N, id, pin label, description or :/TEXT"
	case errors.Is(err, store.ErrNothingToUndo):
		return "'rewind list' shows the checkpoints"
	case errors.As(err, new(*store.NoTranscriptError)):
		return "restore the code only (--code-only), or pick another checkpoint"
	case errors.As(err, new(*store.DamagedError)):
		return "'rewind validate' lists the damage; restore another checkpoint ('rewind list')"
	case errors.As(err, new(*store.BackupError)):
		return "'rewind validate' lists the damage in the store; save again ('rewind save --full') before restoring"
	case errors.As(err, &mnt):
		return mountHint(mnt)
	case errors.As(err, &code) && code.Backup != "":
		return "'rewind undo-restore' brings back the tree as it was (backup " + code.Backup + ")"
	case errors.As(err, &code):
		return "'rewind undo-restore' brings back the tree as it was"
	case errors.Is(err, store.ErrNoRestoreToUndo):
		return "'rewind forks list' and 'rewind list' show what exists"
	case errors.As(err, &redo) && redo.ID != "":
		return "'rewind undo-restore' reverts it; a redo only follows undo-restores"
	case errors.As(err, &redo):
		return "'rewind redo' follows 'rewind undo-restore'"
	case errors.As(err, &forkBk):
		return "it is kept at " + forkBk.Kept + "; move it by hand"
	case errors.Is(err, store.ErrNoTranscript):
		return "pass --transcript PATH, or let the hooks record the session (rewind config --register-hooks)"
	case errors.As(err, new(*store.MissingTranscriptError)):
		return "pass the session's file with --transcript PATH (the hooks record the current one in session.json)"
	case errors.As(err, new(*store.NoCheckpointBeforeError)):
		return "rewind chat only (drop --both), or pick a checkpoint with 'rewind list' and 'rewind restore'"
	case errors.As(err, &fewer) && fewer.Compacted:
		return fmt.Sprintf("go back at most %d, or restore an older checkpoint with 'rewind restore' (its transcript snapshot predates the compaction)", fewer.Have)
	case errors.As(err, &fewer):
		return "'rewind-jsonl turns' lists them"
	}
	return cmdline.HintOf(err)
}

// labelHint says what to do about a pin label refused.
func labelHint(e *store.LabelError) string {
	switch e.Problem {
	case store.LabelTaken:
		return fmt.Sprintf("--force moves it: rewind pin <cp> %s --force (%s stays pinned, as %q)", cmdline.ShellQuote(e.Label), e.Holder, store.DefaultLabel)
	case store.LabelDescription:
		return "choose another label; " + e.Holder + " is named by its description already"
	case store.LabelEmpty:
		return fmt.Sprintf("give a label such as release-1, or none (the checkpoint is then pinned as %q)", store.DefaultLabel)
	}
	return "choose a label such as release-1 or before-refactor: it must not read as @N, :/TEXT, an id or an option"
}

// mountHint says what to do about a restore refused for a file system
// mounted in the tree: unmount or remount it, or restore the other paths.
func mountHint(e *snap.MountError) string {
	do := "make it writable"
	switch {
	case e.Path == e.Mount:
		do = "unmount it"
	case e.ReadOnly:
		do = "remount it read-write"
	}
	return fmt.Sprintf("%s and restore again, or restore the other paths only: rewind restore CP -- ':(top,exclude)%s'", do, cmdline.QuoteText(e.Mount))
}

// cutHint says what to do about a fork or an in-place cut of the transcript that failed. The
// fork package's errors are rewind-fork's, whose flags (--snapshot, --backup-dir) rewind passes
// itself: what a person can do here is fork instead of cutting in place, or run it again.
func cutHint(cut *store.CutError) string {
	var (
		replaced *fork.ReplacedError
		imp      *fork.ImportError
	)
	switch {
	case errors.As(cut, new(*fork.MirrorError)):
		return "fork instead (without --in-place): the fork is loaded into the agent as a new session"
	case errors.As(cut, new(*fork.EmptyError)):
		return "cut later in the conversation (a smaller count for back), or start a new session"
	case errors.As(cut, &imp):
		return fmt.Sprintf("the fork is in %s; load it with 'opencode import %s' in %s", imp.Out, imp.Out, imp.Dir)
	case errors.As(cut, new(*fork.AgentError)):
		return "use one of: " + strings.Join(jsonl.DialectNames(), ", ")
	case errors.As(cut, &replaced) && replaced.Inode == 0:
		return "nothing was cut; run again, or fork instead"
	case errors.As(cut, new(*fork.ChangedError)), errors.As(cut, new(*fork.SnapshotError)),
		errors.As(cut, &replaced), errors.As(cut, new(*fork.GrowingError)), errors.Is(cut, fork.ErrNoBackupDir):
		if cut.InPlace {
			return "fork instead (without --in-place): a fork leaves the live transcript as it is, and can be made from the checkpoint's copy"
		}
		return "the transcript changed while it was read; run this again"
	}
	return cmdline.HintOf(cut)
}
