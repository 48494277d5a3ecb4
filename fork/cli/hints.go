package cli

import (
	"errors"
	"fmt"
	"strings"

	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
)

// hint is rewind-fork's hint-of-error switch: what to do about the fork package's errors, in
// rewind-fork's own flags.
func hint(err error) string {
	var (
		changed  *fork.ChangedError
		snapshot *fork.SnapshotError
		replaced *fork.ReplacedError
		growing  *fork.GrowingError
		mirror   *fork.MirrorError
		empty    *fork.EmptyError
		imp      *fork.ImportError
		agent    *fork.AgentError
	)
	switch {
	case errors.As(err, &changed) && changed.InPlace:
		return "fork from the checkpoint instead: rewind-fork create --snapshot <checkpoint>/transcript.jsonl.gz"
	case errors.As(err, &changed):
		return "pass the checkpoint's transcript.jsonl.gz with --snapshot"
	case errors.As(err, &snapshot) && snapshot.Short:
		return "pass every transcript.jsonl.gz of the checkpoint chain, oldest first, as --snapshot"
	case errors.As(err, &snapshot):
		return "check that --snapshot is the checkpoint's transcript.jsonl.gz"
	case errors.As(err, &replaced) && replaced.Inode == 0:
		return "nothing was cut; run again, or fork instead (rewind-fork create)"
	case errors.As(err, &replaced):
		return "the agent replaced the file; fork instead (rewind-fork create) to keep both"
	case errors.As(err, &growing):
		return "run it again when the agent is idle, or fork instead (rewind-fork create)"
	case errors.As(err, &mirror):
		return "fork instead (rewind-fork create): the fork is loaded into the agent as a new session"
	case errors.As(err, &empty):
		return "cut later in the conversation (a later --offset, or a smaller N for rewind-jsonl back), or start a new session"
	case errors.As(err, &imp):
		return fmt.Sprintf("the fork is in %s; load it with 'opencode import %s' in %s", imp.Out, imp.Out, imp.Dir)
	case errors.As(err, &agent):
		return "pass --agent with one of: " + strings.Join(jsonl.DialectNames(), ", ")
	case errors.Is(err, fork.ErrNoBackupDir):
		return "pass --backup-dir DIR; truncate never runs without a verified backup"
	case errors.Is(err, fork.ErrNoTranscript):
		return "pass --from TRANSCRIPT"
	}
	return cmdline.HintOf(err)
}
