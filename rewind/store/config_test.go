package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/snap"
)

// TestUndoWalksWithTheIgnorePatterns: undo compares the tree with the newest
// checkpoint as a save would see it. A file the project's config ignores is
// no change: the tree equals the newest checkpoint, so undo goes to the one
// before it (it used to compare without the patterns, see the ignored file
// as a change, and pick the newest).
func TestUndoWalksWithTheIgnorePatterns(t *testing.T) {
	t.Parallel()
	s := project(t)
	write(t, s.Dir, "config.json", `{"version": 1, "ignore": ["*.log"]}`)
	write(t, s.Project, "x.txt", "1")
	a := save(t, s, SaveOptions{Description: "A"})
	write(t, s.Project, "x.txt", "2")
	save(t, s, SaveOptions{Description: "B"})
	write(t, s.Project, "a.log", "noise")
	res, err := s.Undo(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checkpoint != a.ID {
		t.Errorf("undo --dry-run goes to %s, want %s (the tree, but for an ignored file, equals the newest)", res.Checkpoint, a.ID)
	}
	if res.Code == nil || res.Code.DeletedList.Len() != 0 {
		t.Errorf("undo would delete the ignored file: %+v", res.Code)
	}
}

// TestUndoReportsWhatItCannotCompare: an unreadable manifest of the newest
// checkpoint is an error naming it, not a silent guess.
func TestUndoReportsWhatItCannotCompare(t *testing.T) {
	t.Parallel()
	s := project(t)
	save(t, s, SaveOptions{})
	write(t, s.Project, "x.txt", "2")
	b := save(t, s, SaveOptions{})
	if err := os.WriteFile(b.ManifestPath(), []byte("not a manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Undo(ctx, true)
	if err == nil || !strings.Contains(err.Error(), b.ID) {
		t.Fatalf("undo with a damaged newest manifest: %v", err)
	}
}

// TestBrokenConfigStopsWhatWalks: a config that cannot be read stops every
// command that walks the tree (its ignore patterns would be lost), with the
// file named; reading the store does not need it.
func TestBrokenConfigStopsWhatWalks(t *testing.T) {
	t.Parallel()
	s := project(t)
	c := save(t, s, SaveOptions{})
	write(t, s.Dir, "config.json", "{\"ignore\": [\"*.log\",]}")
	fresh, err := s.Homes.Open(s.Project)
	if err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func() error{
		"save":    func() error { _, err := fresh.Save(ctx, SaveOptions{}); return err },
		"diff":    func() error { return fresh.Diff(ctx, c, nil, func(snap.Change) error { return nil }) },
		"undo":    func() error { _, err := fresh.Undo(ctx, true); return err },
		"restore": func() error { _, err := fresh.Restore(ctx, c, RestoreOptions{Code: true, DryRun: true}); return err },
	} {
		if err := run(); err == nil || !strings.Contains(err.Error(), filepath.Join(s.Dir, "config.json")) {
			t.Errorf("%s with a broken config: %v", name, err)
		}
	}
	if _, _, err := fresh.List(); err != nil {
		t.Errorf("list needs no config: %v", err)
	}
}
