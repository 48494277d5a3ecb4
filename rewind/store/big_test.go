package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The tests here take most of the package's time, most of it the file
// system's (making and restoring tens of thousands of files), not the
// CPU's. Each does its work in a goroutine it starts before t.Parallel,
// so that the work goes on while the tests that are not parallel run,
// and checks the results after: the file sorts first, so that they start
// first.

// TestSaveAndRestoreOfATreeEmptied: a tree of more entries than a layer
// holds (snap.ErrLayerTooBig), emptied by hand: the save of it is a full
// checkpoint, written as the walk goes, its changes counted against the
// newest; the restore of the first brings every file back (its plan
// written to the staging folder a block at a time).
func TestSaveAndRestoreOfATreeEmptied(t *testing.T) {
	if testing.Short() {
		t.Skip("a tree of 35,000 files")
	}
	s := project(t)
	const folders, each = 175, 200 // (past both snap's layer and its plan held)
	var first, emptied *Checkpoint
	var res *RestoreResult
	ran := make(chan error, 1)
	go func() {
		ran <- func() (err error) {
			for d := range folders {
				dir := filepath.Join(s.Project, fmt.Sprintf("d%03d", d))
				os.Mkdir(dir, 0o755)
				for f := range each {
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), []byte{byte(f)}, 0o644); err != nil {
						return err
					}
				}
			}
			if first, err = s.Save(ctx, SaveOptions{}); err != nil {
				return err
			}
			for d := range folders {
				if err := os.RemoveAll(filepath.Join(s.Project, fmt.Sprintf("d%03d", d))); err != nil {
					return err
				}
			}
			if emptied, err = s.Save(ctx, SaveOptions{}); err != nil {
				return err
			}
			res, err = s.Restore(ctx, first, RestoreOptions{Code: true})
			return err
		}()
	}()
	t.Parallel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	want := Changes{Deleted: folders * each, Since: first.ID}
	if emptied.Snapshot.Layer || emptied.Snapshot.FullBecause != "" || emptied.Changes != want || emptied.Snapshot.Files != 1 {
		t.Fatalf("save of the tree emptied: %+v, changes %+v (want %+v)", emptied.Snapshot, emptied.Changes, want)
	}
	if res.Code.Written != folders*each || res.Code.Folders != folders || res.Code.Deleted != 0 {
		t.Fatalf("restore of the first: %+v", res.Code)
	}
	if got := read(t, filepath.Join(s.Project, "d174/f199")); got != string([]byte{199}) {
		t.Fatalf("d174/f199 holds %q", got)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("validate: %+v %v", probs, err)
	}
}
