package store

import (
	"fmt"
	"strings"

	"rewind.dev/fork"
	"rewind.dev/jsonl"
)

// HintError is an error with a hint of what to do.
type HintError struct {
	Err  error
	Hint string
}

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }

// hintFrom gives a fork error its hint, as rewind's commands would say it:
// the fork package's hints name rewind-fork's flags (--snapshot,
// --backup-dir, rewind-fork create), which rewind passes itself.
func hintFrom(err error, how ContextMode) error {
	h := fork.Hint(err)
	plumbing := strings.Contains(h, "--snapshot") || strings.Contains(h, "--backup-dir") || strings.Contains(h, "rewind-fork")
	switch {
	case h == "":
		return err
	case plumbing && how == ContextInPlace:
		h = "fork instead (without --in-place): a fork leaves the live transcript as it is, and can be made from the checkpoint's copy"
	case plumbing:
		h = "the transcript changed while it was read; run this again"
	}
	return &HintError{Err: err, Hint: h}
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

// damaged is the error of a restore refused for a damaged checkpoint.
func damaged(err error) error {
	return &HintError{Err: fmt.Errorf("%w; nothing was changed", err), Hint: "'rewind validate' lists the damage; restore another checkpoint ('rewind list')"}
}
