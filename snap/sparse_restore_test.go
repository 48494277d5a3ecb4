package snap

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSparseRestorePlansAsTheWholeTree restores layer chains over random
// edits (kind, mode and content changes, new and removed folders, ignore
// files) with the plan made over what
// differs (sparsePlan) and over the whole tree: a dry run must say the same
// of every path, and a restore must bring back the same tree.
func TestSparseRestorePlansAsTheWholeTree(t *testing.T) {
	gitEnv(t)
	defer func(v bool, c int) { sparseRestores, streamChunk = v, c }(sparseRestores, streamChunk)
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			if seed%2 == 0 {
				streamChunk = 61
			} else {
				streamChunk = 1 << 20
			}
			rng := rand.New(rand.NewSource(seed))
			dir, snaps := t.TempDir(), t.TempDir()
			genTree(t, rng, dir, 120)
			const n = 4
			states := make([]map[string]string, n)
			for i := range n {
				if i > 0 {
					mutate(t, rng, dir)
					chmodSomeFolders(t, rng, dir)
				}
				layerSave(t, dir, snaps, i, 0)
				states[i], _ = splitIgnored(state(t, dir))
			}
			for k := range 6 {
				i := rng.Intn(n)
				mutate(t, rng, dir)
				chmodSomeFolders(t, rng, dir)
				if k%2 == 0 {
					touchSome(t, rng, dir)
				}
				m, err := OpenManifest(filepath.Join(snaps, fmt.Sprint(i), "manifest"))
				if err != nil {
					t.Fatal(err)
				}
				plans := make([]*RestoreResult, 2)
				for j, sparse := range []bool{false, true} {
					sparseRestores = sparse
					if plans[j], err = Restore(context.Background(), dir, "", RestoreOptions{Manifest: m, DryRun: true}); err != nil {
						t.Fatalf("dry run (sparse %v): %v", sparse, err)
					}
				}
				if !reflect.DeepEqual(plans[0], plans[1]) {
					t.Fatalf("restore of %d: over what differs\n%+v\nover the whole tree\n%+v", i, plans[1], plans[0])
				}
				sparseRestores = k%3 != 2
				res, err := Restore(context.Background(), dir, "", RestoreOptions{Manifest: m})
				if err != nil {
					t.Fatalf("restore of %d: %v", i, err)
				}
				if res.Written != plans[0].Written || res.Deleted != plans[0].Deleted || res.Unchanged != plans[0].Unchanged {
					t.Fatalf("restore of %d did %+v, its dry run said %+v", i, res, plans[0])
				}
				got, _ := splitIgnored(state(t, dir))
				if d := diffStates(states[i], got); d != "" {
					t.Fatalf("restore of %d differs:\n%s", i, d)
				}
			}
		})
	}
}

// chmodSomeFolders gives a few folders under dir another mode.
func chmodSomeFolders(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir && rng.Intn(8) == 0 {
			mode := fs.FileMode(0o755)
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() == mode {
				mode = 0o750
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
}
