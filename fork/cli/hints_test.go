package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
)

// TestHint: each of the fork package's errors gets a hint naming rewind-fork's own flags, never
// rewind's (--in-place, back).
func TestHint(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fork.ChangedError{Path: "t.jsonl", Offset: 3, Reason: "shorter"}, "pass the checkpoint's transcript.jsonl.gz with --snapshot"},
		{&fork.ChangedError{Path: "t.jsonl", Offset: 3, Reason: "prefix_differs", InPlace: true}, "fork from the checkpoint instead: rewind-fork create --snapshot <checkpoint>/transcript.jsonl.gz"},
		{&fork.ChangedError{Path: "t.jsonl", Offset: 3, Reason: "snapshot", InPlace: true}, "fork from the checkpoint instead: rewind-fork create --snapshot <checkpoint>/transcript.jsonl.gz"},
		{&fork.SnapshotError{Offset: 9, Short: true, Held: 4}, "pass every transcript.jsonl.gz of the checkpoint chain, oldest first, as --snapshot"},
		{&fork.SnapshotError{Offset: 9, Err: errors.New("its first bytes differ")}, "check that --snapshot is the checkpoint's transcript.jsonl.gz"},
		{&fork.ReplacedError{Path: "t.jsonl", Inode: 2, Want: 1}, "the agent replaced the file; fork instead (rewind-fork create) to keep both"},
		{&fork.ReplacedError{Path: "t.jsonl"}, "nothing was cut; run again, or fork instead (rewind-fork create)"},
		{&fork.GrowingError{Path: "t.jsonl", Rounds: 8}, "run it again when the agent is idle, or fork instead (rewind-fork create)"},
		{&fork.MirrorError{Agent: "opencode", Path: "m.jsonl"}, "fork instead (rewind-fork create): the fork is loaded into the agent as a new session"},
		{&fork.EmptyError{What: "user message"}, "cut later in the conversation (a later --offset, or a smaller N for rewind-jsonl back), or start a new session"},
		{&fork.ImportError{Session: "ses_1", Out: "/x/f.json", Dir: "/p", Err: errors.New("exit 1")}, "the fork is in /x/f.json; load it with 'opencode import /x/f.json' in /p"},
		{&fork.AgentError{Agent: "nope", Err: errors.New("unknown agent")}, "pass --agent with one of: claude, "},
		{fork.ErrNoBackupDir, "pass --backup-dir DIR; truncate never runs without a verified backup"},
		{fork.ErrNoTranscript, "pass --from TRANSCRIPT"},
		{cmdline.WithHint(errors.New("x"), "carried"), "carried"},
		{errors.New("plain"), ""},
	} {
		err := fmt.Errorf("wrapped: %w", tc.err)
		got := hint(err)
		if got != tc.want && !(strings.HasSuffix(tc.want, ", ") && strings.HasPrefix(got, tc.want)) {
			t.Errorf("hint(%T %v) = %q, want %q", tc.err, tc.err, got, tc.want)
		}
		if strings.Contains(got, "--in-place") || strings.Contains(got, "count for back") {
			t.Errorf("hint(%T) names rewind's flags: %q", tc.err, got)
		}
	}
}
