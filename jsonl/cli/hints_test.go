package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
)

// TestHint: each of the jsonl package's errors gets a hint naming rewind-jsonl's own commands
// and flags, and its exit status.
func TestHint(t *testing.T) {
	agents := "pass --agent " + strings.Join(jsonl.DialectNames(), "|")
	for _, tc := range []struct {
		err  error
		want string
		code int
	}{
		{&jsonl.UnknownDialectError{Name: "nope"}, agents, 0},
		{jsonl.ErrUnknownAgent, agents, 0},
		{jsonl.ErrFewerPrompts, "run rewind-jsonl turns FILE to list the prompts", exitNotFound},
		{jsonl.ErrEventNotFound, "the id must be the event id field of a complete line (" + idFields() + ")", exitNotFound},
		{jsonl.ErrNoEventIDs, "use rewind-jsonl back N for this agent", 0},
		{&jsonl.OpenError{Path: "t.jsonl", Err: errors.New("open transcript: permission denied")}, "check that the path names a readable transcript file", 0},
		{cmdline.WithHint(errors.New("x"), "carried"), "carried", 0},
		{errors.New("plain"), "", 0},
	} {
		err := fmt.Errorf("wrapped: %w", tc.err)
		if got := hint(err); got != tc.want {
			t.Errorf("hint(%T %v) = %q, want %q", tc.err, tc.err, got, tc.want)
		}
		if got := code(err); got != tc.code {
			t.Errorf("code(%T %v) = %d, want %d", tc.err, tc.err, got, tc.code)
		}
	}
}
