package cli

import (
	"errors"
	"strings"

	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
)

// hint is rewind-jsonl's hint-of-error switch: what to do about the jsonl package's errors, in
// rewind-jsonl's own commands and flags.
func hint(err error) string {
	var (
		unknown *jsonl.UnknownDialectError
		open    *jsonl.OpenError
	)
	switch {
	case errors.As(err, &unknown), errors.Is(err, jsonl.ErrUnknownAgent):
		return "pass --agent " + strings.Join(jsonl.DialectNames(), "|")
	case errors.Is(err, jsonl.ErrFewerPrompts):
		return "run rewind-jsonl turns FILE to list the prompts"
	case errors.Is(err, jsonl.ErrEventNotFound):
		return "the id must be the event id field of a complete line (" + idFields() + ")"
	case errors.Is(err, jsonl.ErrNoEventIDs):
		return "use rewind-jsonl back N for this agent"
	case errors.As(err, &open):
		return "check that the path names a readable transcript file"
	}
	return cmdline.HintOf(err)
}

// code gives rewind-jsonl's own exit statuses: 4 for what a scan did not find.
func code(err error) int {
	if errors.Is(err, jsonl.ErrFewerPrompts) || errors.Is(err, jsonl.ErrEventNotFound) {
		return exitNotFound
	}
	return 0
}
