// Package jsonl reads AI coding agents' transcript files (JSON Lines) robustly, records where a
// checkpoint was in a transcript (a [Cursor]), and finds user-prompt boundaries by scanning from
// the end of the file.
//
// What differs between agents (the event id field, what a user prompt is, which lines written
// just before a prompt belong to it, where the title lives and how a fork marks it) is data: the
// dialect section of each agent's manifest (rewind.dev/internal/agents), loaded as a [Dialect].
//
// Lines are read without a length limit. A last line without a trailing newline is incomplete:
// it is not part of a cursor and never a turn. Blank lines, CRLF endings, NUL runs and lines
// that are not JSON objects are tolerated, skipped and counted. A transcript that does not exist
// yet is an empty transcript whose cursor is at 0.
//
// The usual entry point is [Open]:
//
//	t, err := jsonl.Open(path, nil) // nil: detect the dialect from content and path
//	defer t.Close()
//	turn, err := t.Back(ctx, 1)    // cut before the most recent prompt: turn.Offset
//	cur, err := t.Cursor(ctx, jsonl.CursorOptions{})
package jsonl
