package snap

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"rewind.dev/snap/pathspec"
)

// TestSparseRestorePlansAsTheWholeTree restores layer chains over random
// edits (kind, mode and content changes, new and removed folders, ignore
// files) with the plan made over what differs (sparsePlan) and over the
// whole tree: a dry run must say the same of every path, limited to paths
// or not (refusals included), and a restore must bring back the same tree.
func TestSparseRestorePlansAsTheWholeTree(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			chunk := 1 << 20
			if seed%2 == 0 {
				chunk = 61
			}
			rng := rand.New(rand.NewSource(seed))
			dir, snaps := t.TempDir(), t.TempDir()
			genTree(t, rng, dir, 120)
			const n = 4
			states := layerChain(t, rng, dir, snaps, n)
			limited := 0 // restores limited to paths that change something
			for k := range 6 {
				i := rng.Intn(n)
				mutate(t, rng, dir)
				chmodSomeFolders(t, rng, dir)
				if k%2 == 0 {
					touchSome(t, rng, dir)
				}
				m, err := openChunked(chunk)(filepath.Join(snaps, fmt.Sprint(i), "manifest"))
				if err != nil {
					t.Fatal(err)
				}
				// Limited to paths (a folder, a glob, one left out), the plans
				// are the same too, refusals included.
				pathspecs := [][]string{nil, {fmt.Sprintf("d%d", rng.Intn(6))}, {fmt.Sprintf("d%d/s%d/*", rng.Intn(6), rng.Intn(3)), fmt.Sprintf(":!d%d", rng.Intn(6))}}
				for _, items := range pathspecs {
					plans := make([]*RestoreResult, 2)
					errs := make([]string, 2)
					for j, sparse := range []bool{false, true} {
						opts := RestoreOptions{Manifest: m, DryRun: true, planWhole: !sparse}
						if items != nil {
							if opts.Paths, err = pathspec.Parse(items, pathspec.Options{}); err != nil {
								t.Fatal(err)
							}
						}
						plans[j], err = Restore(context.Background(), dir, "", opts)
						errs[j] = fmt.Sprint(err)
					}
					if !reflect.DeepEqual(plans[0], plans[1]) || errs[0] != errs[1] {
						t.Fatalf("restore of %d, paths %q: over what differs\n%+v (%s)\nover the whole tree\n%+v (%s)", i, items, plans[1], errs[1], plans[0], errs[0])
					}
					if items == nil && errs[0] != "<nil>" {
						t.Fatalf("dry run of %d: %s", i, errs[0])
					}
					if items != nil && errs[0] == "<nil>" && plans[0].Written+plans[0].Deleted > 0 {
						limited++
					}
				}
				plans := make([]*RestoreResult, 1)
				if plans[0], err = Restore(context.Background(), dir, "", RestoreOptions{Manifest: m, DryRun: true, planWhole: true}); err != nil {
					t.Fatal(err)
				}
				res, err := Restore(context.Background(), dir, "", RestoreOptions{Manifest: m, planWhole: k%3 == 2})
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
			if limited == 0 {
				t.Fatal("no restore limited to paths planned a change")
			}
		})
	}
}

// layerChain saves n snapshots of dir into snaps (a full one, then layers
// over it), dir edited every way before each but the first, and returns the
// tree each holds, ignored files aside.
func layerChain(t *testing.T, rng *rand.Rand, dir, snaps string, n int) []map[string]string {
	t.Helper()
	states := make([]map[string]string, n)
	for i := range n {
		if i > 0 {
			mutate(t, rng, dir)
			chmodSomeFolders(t, rng, dir)
		}
		layerSave(t, dir, snaps, i, 0)
		states[i], _ = splitIgnored(state(t, dir))
	}
	return states
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

// TestArchivePlanOverWhatDiffers restores a whole archive over a tree
// edited every way a restore undoes (kinds, modes, contents, folders added
// and removed, some closed to their owner; then emptied but for its
// ignored files, and every file rewritten), planned three ways: over the
// whole tree (held), over what differs as archive and walk are read
// together (sparseArchive), and that with the plan written out a few
// entries a block. Dry runs, results, refusals and trees must be the same,
// and the trees the archive's.
func TestArchivePlanOverWhatDiffers(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	const after = 10 // (the prefetch starts part way: the restores do not depend on it)
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			dir := filepath.Join(t.TempDir(), "tree")
			os.Mkdir(dir, 0o755)
			genTree(t, rng, dir, 150)
			archive := filepath.Join(t.TempDir(), "s.tar.gz")
			create(t, dir, archive)
			want, _ := splitIgnored(state(t, dir))
			edits := []func(){
				func() { mutate(t, rng, dir); chmodSomeFolders(t, rng, dir) },
				func() { emptyButIgnored(t, dir) },
				func() { rewriteEveryFile(t, dir) },
				func() { closeSomeFolders(t, rng, dir) },
				func() {}, // unchanged
			}
			for k, edit := range edits {
				edit()
				ways := []struct {
					sparse bool
					at     int
				}{{false, 1 << 30}, {true, 1 << 30}, {true, 1 + rng.Intn(5)}}
				var results []string
				var trees []map[string]string
				for _, w := range ways {
					opts := RestoreOptions{planWhole: !w.sparse, spillAt: w.at, prefetchAfter: after}
					copyDir := filepath.Join(t.TempDir(), "tree")
					if out, err := exec.Command("cp", "-a", dir, copyDir).CombinedOutput(); err != nil {
						t.Fatalf("cp: %v\n%s", err, out)
					}
					dryOpts := opts
					dryOpts.DryRun = true
					dry, derr := Restore(context.Background(), copyDir, archive, dryOpts)
					res, err := Restore(context.Background(), copyDir, archive, opts)
					results = append(results, strings.ReplaceAll(fmt.Sprintf("%+v %v\n%+v %v", dry, derr, res, err), copyDir, "TREE"))
					trees = append(trees, state(t, copyDir))
					makeWritable(copyDir) // (for TempDir's removal)
					if err != nil {
						t.Fatalf("edit %d (%+v): %v", k, w, err)
					}
					if got, _ := splitIgnored(trees[len(trees)-1]); diffStates(want, got) != "" {
						t.Fatalf("edit %d (%+v): restored tree differs:\n%s", k, w, diffStates(want, got))
					}
				}
				for j := 1; j < len(ways); j++ {
					if results[j] != results[0] {
						t.Fatalf("edit %d: held\n%s\n%+v\n%s", k, results[0], ways[j], results[j])
					}
					if !reflect.DeepEqual(trees[0], trees[j]) {
						t.Fatalf("edit %d: the trees differ (%+v):\n%s", k, ways[j], diffStates(trees[0], trees[j]))
					}
				}
				if _, err := Restore(context.Background(), dir, archive, RestoreOptions{}); err != nil {
					t.Fatalf("edit %d: %v", k, err)
				}
				makeWritable(dir)
			}
		})
	}
}
