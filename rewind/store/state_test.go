package store

import (
	"os"
	"path/filepath"
	"testing"

	"rewind.dev/internal/layout"
)

// TestGlobalStoreInHome: with the project in HOME and its store in
// ~/.rewind, a restore to an older checkpoint keeps every checkpoint, the
// agent's live transcript and the user's new file's backup, and
// undo-restore brings the tree back.
func TestGlobalStoreInHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("REWIND_HOME", "")
	write(t, home, "notes.txt", "v1")
	transcript := filepath.Join(home, ".claude/projects/-home/s.jsonl")
	write(t, home, ".claude/projects/-home/s.jsonl", string(fixtureBytes(t)))
	s, _, err := Init(home, layout.ModeGlobal)
	if err != nil {
		t.Fatal(err)
	}
	a := save(t, s, SaveOptions{TranscriptPath: transcript, Agent: "claude"})
	write(t, home, "notes.txt", "v2")
	write(t, home, "new.txt", "precious")
	save(t, s, SaveOptions{TranscriptPath: transcript, Agent: "claude"})
	live := read(t, transcript)
	res, err := s.Restore(ctx, a, RestoreOptions{Code: true})
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.IDs(); len(ids) != 3 {
		t.Fatalf("after the restore the store holds %d checkpoints, want 3 (two saves and the backup %s)", len(ids), res.Backup)
	}
	if got := read(t, transcript); got != live {
		t.Fatalf("the restore changed the live transcript (%d bytes, had %d)", len(got), len(live))
	}
	if _, err := os.Stat(filepath.Join(home, "new.txt")); !os.IsNotExist(err) {
		t.Fatalf("new.txt not removed by the restore: %v", err)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(home, "new.txt")); got != "precious" {
		t.Fatalf("undo-restore did not bring new.txt back: %q", got)
	}
	if probs, _, _ := s.Validate(ctx); len(probs) > 0 {
		t.Fatalf("validate: %v", probs)
	}
}
