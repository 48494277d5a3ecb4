package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUndoKeepsFilesNamedLikeItsOwn: undoing an in-place cut never
// replaces a file because of its name — the user's <transcript>.rewind-undo
// stays — and what it keeps aside never replaces an earlier copy taken in
// the same second.
func TestUndoKeepsFilesNamedLikeItsOwn(t *testing.T) {
	t.Parallel()
	s := project(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl")
	data := fixtureBytes(t)
	ts := turns(t, fixture)
	os.WriteFile(tp, data[:ts[2].PromptOffset], 0o644)
	cp := save(t, s, SaveOptions{TranscriptPath: tp})
	os.WriteFile(tp, data, 0o644)
	mine := tp + ".rewind-undo"
	os.WriteFile(mine, []byte("the user's own file"), 0o644)
	if _, err := s.Restore(ctx, cp, RestoreOptions{Context: "in-place"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, mine); got != "the user's own file" {
		t.Errorf("%s = %q: undo-restore wrote over it", mine, got)
	}
	if read(t, tp) != string(data) {
		t.Error("undo-restore did not bring the transcript back")
	}

	a := filepath.Join(t.TempDir(), "x.jsonl")
	b := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(a, []byte("first"), 0o644)
	os.WriteFile(b, []byte("second"), 0o644)
	pa, err := s.moveAside(a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := s.moveAside(b)
	if err != nil {
		t.Fatal(err)
	}
	if pa == pb || read(t, pa) != "first" || read(t, pb) != "second" {
		t.Errorf("two files kept aside as %s (%q) and %s (%q): one replaced the other", pa, read(t, pa), pb, read(t, pb))
	}
}
