package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGCKeepsWhatDamagedCheckpointsNeed damages each file of a chain in
// turn and runs gc --keep 1: every checkpoint that restored before and is
// still listed still restores, and the newest — what the next save builds
// on — always does when it did.
func TestGCKeepsWhatDamagedCheckpointsNeed(t *testing.T) {
	t.Parallel()
	base, trees := chainStore(t)
	kinds := []string{"removed", "truncated", "a flipped byte", "garbage"}
	for i, f := range storeFiles(base) {
		rel, _ := filepath.Rel(base.Dir, f)
		kind := kinds[(i+1)%len(kinds)] // not the pairing TestValidateAndRestoreAgree takes
		t.Run(rel+"/"+kind, func(t *testing.T) {
			d := cloneStore(t, base)
			damages[kind](filepath.Join(d.Dir, rel))
			before := map[string]bool{}
			probe := cloneStore(t, d)
			for id, tree := range trees {
				before[id] = restoresWhole(t, probe, id, tree) == nil
			}
			res, err := d.GC(ctx, GCOptions{Keep: 1})
			if err != nil {
				t.Fatalf("gc: %v", err)
			}
			for id, tree := range trees {
				if _, err := d.Load(id); err != nil || !before[id] {
					continue // deleted by the policy, or broken already
				}
				if err := restoresWhole(t, cloneStore(t, d), id, tree); err != nil {
					t.Errorf("%s restored before gc (removed %v, damaged %v), not after: %v", id, res.Removed, res.Damaged, err)
				}
			}
		})
	}
}

// TestGCAroundUnreadableMetadata is the case: one unreadable
// metadata.json in the middle of a chain, then gc --keep 1. gc deletes
// nothing older than it, says why, and the newest still restores.
func TestGCAroundUnreadableMetadata(t *testing.T) {
	t.Parallel()
	s, trees := chainStore(t)
	cps, _, _ := s.List() // newest first
	os.WriteFile(filepath.Join(cps[1].Dir, MetadataFile), []byte("{not json"), 0o644)
	res, err := s.GC(ctx, GCOptions{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 0 || len(res.Damaged) != 1 || res.Damaged[0] != cps[1].ID {
		t.Fatalf("gc removed %v, damaged %v: want nothing removed, %s reported", res.Removed, res.Damaged, cps[1].ID)
	}
	if err := restoresWhole(t, s, cps[0].ID, trees[cps[0].ID]); err != nil {
		t.Fatalf("the newest no longer restores: %v", err)
	}
}
