package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The tests here take the paths of snap's that only large trees take, over
// a small one: they set snap's thresholds small (Store.layerMost,
// Store.spillAt).

// TestSaveAndRestoreOfATreeEmptied: a tree of more entries than a layer
// holds (snap.ErrLayerTooBig), emptied by hand: the save of it is a full
// checkpoint, written as the walk goes, its changes counted against the
// newest; the restore of the first brings every file back (its plan
// written to the staging folder a block at a time).
func TestSaveAndRestoreOfATreeEmptied(t *testing.T) {
	t.Parallel()
	s := project(t)
	const folders, each = 8, 25
	s.layerMost, s.spillAt = 64, 64 // (the tree is past both snap's layer and its plan held)
	for d := range folders {
		dir := filepath.Join(s.Project, fmt.Sprintf("d%03d", d))
		os.Mkdir(dir, 0o755)
		for f := range each {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), []byte{byte(f)}, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := save(t, s, SaveOptions{})
	for d := range folders {
		if err := os.RemoveAll(filepath.Join(s.Project, fmt.Sprintf("d%03d", d))); err != nil {
			t.Fatal(err)
		}
	}
	emptied := save(t, s, SaveOptions{})
	res, err := s.Restore(ctx, first, RestoreOptions{Code: true})
	if err != nil {
		t.Fatal(err)
	}
	want := Changes{Deleted: folders * each, Since: first.ID}
	if emptied.Snapshot.Layer || emptied.Snapshot.FullBecause != "" || emptied.Changes != want || emptied.Snapshot.Files != 1 {
		t.Fatalf("save of the tree emptied: %+v, changes %+v (want %+v)", emptied.Snapshot, emptied.Changes, want)
	}
	if res.Code.Written != folders*each || res.Code.Folders != folders || res.Code.Deleted != 0 {
		t.Fatalf("restore of the first: %+v", res.Code)
	}
	last := fmt.Sprintf("d%03d/f%03d", folders-1, each-1)
	if got := read(t, filepath.Join(s.Project, last)); got != string([]byte{each - 1}) {
		t.Fatalf("%s holds %q", last, got)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("validate: %+v %v", probs, err)
	}
}
