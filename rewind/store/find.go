package store

import (
	"context"
	"strings"

	"rewind.dev/hookd"
	"rewind.dev/jsonl"
)

// Finding a checkpoint or a prompt by its words. A checkpoint's words are the
// prompt it was taken at (a prompt hook's checkpoint holds the tree as it was
// before that prompt ran) and its description; a search matches when they
// contain the text, ignoring case and how the words are spaced — the same rule
// for ':/TEXT' names, 'list --grep' and 'back :/TEXT'.

// SearchPrefix starts a checkpoint name that searches (git's ":/message").
const SearchPrefix = ":/"

// Mentions reports whether the prompt c was taken at, or its description,
// contains text.
func Mentions(c *Checkpoint, text string) bool {
	want := foldSpace(text)
	if want == "" {
		return false
	}
	if c.Trigger.Event == hookd.EventPrompt && strings.Contains(foldSpace(c.Trigger.Prompt), want) {
		return true
	}
	return strings.Contains(foldSpace(c.Description), want)
}

// foldSpace lowers s and joins its words with one space each.
func foldSpace(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// containsWords is Mentions's rule for any text.
func containsWords(s, text string) bool {
	want := foldSpace(text)
	return want != "" && strings.Contains(foldSpace(s), want)
}

// findNamed is the newest checkpoint (restore backups left out) that the name
// names as a whole: its pin label, else its description. nil when none.
func findNamed(cps []*Checkpoint, name string) *Checkpoint {
	for _, c := range cps { // newest first
		if c.Pinned != "" && c.Pinned == name {
			return c
		}
	}
	for _, c := range cps {
		if !c.Backup() && c.Description != "" && c.Description == name {
			return c
		}
	}
	return nil
}

// findMentioning is the newest checkpoint (restore backups left out) that
// mentions text, or nil.
func findMentioning(cps []*Checkpoint, text string) *Checkpoint {
	for _, c := range cps {
		if !c.Backup() && Mentions(c, text) {
			return c
		}
	}
	return nil
}

// backCount is how many prompts back (back's N) the newest prompt of t
// containing text is. Run inside the agent (o.InAgent), the prompt being
// answered counts as the newest even before the agent writes it (backTurn),
// and is searched too.
func (s *Store) backCount(ctx context.Context, t *jsonl.Transcript, path string, o BackOptions) (int, error) {
	shift := 0
	if o.InAgent {
		if ups := s.newestPromptCheckpoint(path); ups != nil {
			if v, err := t.Verify(ups.Transcript.Cursor); err == nil && v.Extends {
				newest, err := t.Turns(ctx, 1)
				if err != nil {
					return 0, err
				}
				if len(newest) == 0 || newest[0].PromptOffset < ups.Transcript.Cursor.ByteOffsetEnd {
					// The running prompt is not written yet: it is the 1st.
					if containsWords(ups.Trigger.Prompt, o.Text) {
						return 1, nil
					}
					shift = 1
				}
			}
		}
	}
	n, searched := 0, 0
	var oldest int64 = -1
	err := t.ScanTurns(ctx, func(tu jsonl.Turn) bool {
		searched++
		oldest = tu.PromptOffset
		if containsWords(tu.Text, o.Text) {
			n = tu.N
			return false
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	if n == 0 {
		// Prompts before a compaction are searched where the file still holds them; it hid
		// some only when the file holds no prompt before it (as fewerPrompts says).
		at, compacted, _ := t.FirstCompaction(ctx)
		hid := compacted && (oldest < 0 || oldest > at)
		return 0, &NoPromptError{Text: o.Text, Searched: searched + shift, Compacted: hid}
	}
	return n + shift, nil
}
