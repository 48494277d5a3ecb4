package cmdline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Tool is one command's edge: its name and the two switches from its errors to what it says
// and how it exits.
type Tool struct {
	Name string // "rewind-fork"
	// Hint is the command's hint-of-error switch: typed library errors to hints naming the
	// command's own flags. It ends with HintOf(err), the hint the error carries. nil: HintOf.
	Hint func(err error) string
	// Code gives the command's own exit statuses for typed errors (rewind's 10 for no store);
	// 0 leaves err to the shared ones. nil: none.
	Code func(err error) int
}

// ExitCode is err's exit status: 0 for nil; 130 when ctx was cancelled (SIGINT, SIGTERM:
// whatever error the cut-short work returned, the run ends as interrupted) or err is
// context.Canceled; the status err carries (usage, Exit); the tool's own; else 1.
func (t *Tool) ExitCode(ctx context.Context, err error) int {
	switch {
	case err == nil:
		return ExitOK
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	if c := CodeOf(err); c != 0 {
		return c
	}
	if t.Code != nil {
		if c := t.Code(err); c != 0 {
			return c
		}
	}
	return ExitFailure
}

// HintOf is what the tool says to do about err: its Hint switch, else the hint err carries.
func (t *Tool) HintOf(err error) string {
	if t.Hint != nil {
		return t.Hint(err)
	}
	return HintOf(err)
}

// errorJSON is the one object a failed run prints on stderr under --json (rewind's scripting
// contract, as restic's exit_error).
type errorJSON struct {
	Type     string `json:"type"` // "error"
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	ExitCode int    `json:"exit_code"`
}

// Report prints err on stderr for a person ("<tool>: error: …" and, when there is one,
// "<tool>: hint: …") or, asJSON, for a script (one errorJSON line), and returns the exit
// status. An interrupted run says "interrupted", without a hint; an Exit says nothing. For a
// person, message and hint are shown through QuoteText.
func (t *Tool) Report(ctx context.Context, stderr io.Writer, err error, asJSON bool) int {
	code := t.ExitCode(ctx, err)
	var quiet exitStatus
	if err == nil || errors.As(err, &quiet) && code != ExitInterrupted {
		return code
	}
	msg, hint := err.Error(), t.HintOf(err)
	if code == ExitInterrupted {
		msg, hint = "interrupted", ""
	}
	if asJSON {
		enc := json.NewEncoder(stderr)
		enc.SetEscapeHTML(false)
		enc.Encode(errorJSON{Type: "error", Message: msg, Hint: hint, ExitCode: code})
		return code
	}
	// Errors name files, checkpoints and prompts as the libraries found them: one line each, its
	// control characters escaped, is what a terminal gets (JSON above keeps them exact).
	fmt.Fprintf(stderr, "%s: error: %s\n", t.Name, QuoteText(msg))
	if hint != "" {
		fmt.Fprintf(stderr, "%s: hint: %s\n", t.Name, QuoteText(hint))
	}
	return code
}

// PrintVersion prints "<tool> <version> (<details>)" on w: the tool's own name, then
// ReadBuild's String, e.g. "rewind-snap 0.4.0 (commit 1a2b3c4d5e6f, 2026-11-28, go1.26.8,
// linux/amd64)". Scripts take the second field; every tool of one build prints the same.
func (t *Tool) PrintVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s %s\n", t.Name, ReadBuild())
	return err
}
