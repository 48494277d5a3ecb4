package snap

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oddNames are names a tree may hold that a manifest, a tar header or a
// restore must not trip on.
var oddNames = []string{
	"plain", "with space", "tab\there", "new\nline", `back\slash`, `"quoted"`, "-dash", "#hash", "!bang",
	"star*", "q?", "[br]", "trailing ", "é-accent", "日本", "bad-\xff-utf8", ".hidden", ".wh.foo", ".wh..wh..opq",
	".rewind-restore-notes", "x.tmp-1", strings.Repeat("L", 200), "-", "~", "a.b.c",
}

// randomTree writes a tree mixing every kind of entry a save must accept:
// files of many sizes and modes, empty folders, folders with modes,
// symlinks to inside and outside, absolute, dangling and looping ones, a
// path as deep as the limit allows, odd names.
func randomTree(t *testing.T, rng *rand.Rand, dir string, depth int) {
	t.Helper()
	t.Cleanup(func() { makeWritable(dir) })
	name := func() string { return oddNames[rng.Intn(len(oddNames))] + fmt.Sprint(rng.Intn(3)) }
	var dirs []string
	dirs = append(dirs, "")
	for range 6 + rng.Intn(6) {
		d := filepath.Join(dirs[rng.Intn(len(dirs))], name())
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err == nil {
			dirs = append(dirs, d)
		}
	}
	fileModes := []fs.FileMode{0o644, 0o755, 0o600, 0o444, 0o700, 0o640}
	for range 10 + rng.Intn(20) {
		p := filepath.Join(dir, dirs[rng.Intn(len(dirs))], name())
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		size := rng.Intn(4096)
		switch rng.Intn(10) {
		case 0:
			size = 0
		case 1:
			size = 200<<10 + rng.Intn(200<<10) // around prefetchMax: both read paths
		}
		b := make([]byte, size)
		rng.Read(b)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, fileModes[rng.Intn(len(fileModes))])
	}
	targets := []string{"plain0", "../plain1", "/etc/passwd", "/no/such/thing", "../../../../../../out", "loop-b", "loop-a", ".", "..",
		"self", "dangling", strings.Repeat("../", 40) + "x", "d/e/f", "with space0"}
	for range 4 + rng.Intn(6) {
		d := dirs[rng.Intn(len(dirs))]
		target := targets[rng.Intn(len(targets))]
		ln := "l-" + name()
		switch target {
		case "loop-a", "loop-b":
			ln = strings.TrimPrefix(target, "loop-")
			ln = map[string]string{"a": "loop-b", "b": "loop-a"}[ln]
		case "self":
			ln = "self"
		}
		os.Symlink(target, filepath.Join(dir, d, ln))
	}
	if rng.Intn(2) == 0 { // as deep as the limit allows, below depth elements already used
		deep := filepath.Join(dir, strings.Repeat("d/", DefaultLimits.MaxDepth-1-depth))
		os.MkdirAll(deep, 0o755)
		os.WriteFile(filepath.Join(deep, "bottom"), []byte("deep"), 0o644)
	}
	for range rng.Intn(3) {
		os.MkdirAll(filepath.Join(dir, dirs[rng.Intn(len(dirs))], "empty-"+name()), 0o755)
	}
	dirModes := []fs.FileMode{0o755, 0o700, 0o750, 0o555}
	for _, d := range dirs[1:] {
		if rng.Intn(4) == 0 {
			os.Chmod(filepath.Join(dir, d), dirModes[rng.Intn(len(dirModes))])
		}
	}
}

// mutateRandomTree changes a tree the way an agent might: content, modes,
// deletions, a file for a folder and a folder for a file, a folder for a
// symlink to its sibling, retargeted and new symlinks, new entries.
func mutateRandomTree(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	var all []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			all = append(all, p)
			os.Chmod(filepath.Dir(p), 0o755) // writable while it changes; modes are set again below
		}
		return nil
	})
	for _, p := range all {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		switch rng.Intn(12) {
		case 0:
			os.RemoveAll(p)
		case 1:
			os.RemoveAll(p)
			os.WriteFile(p, []byte("now a file"), 0o644)
		case 2:
			os.RemoveAll(p)
			os.MkdirAll(filepath.Join(p, "now-a-folder"), 0o755)
		case 3:
			if fi.IsDir() {
				sib := p + "-sibling"
				os.Rename(p, sib)
				os.Symlink(filepath.Base(sib), p)
			}
		case 4:
			if fi.Mode()&fs.ModeSymlink != 0 {
				os.Remove(p)
				os.Symlink("/somewhere/else", p)
			}
		case 5:
			if fi.Mode().IsRegular() {
				os.Chmod(p, fi.Mode().Perm()^0o111)
			}
		case 6:
			if fi.Mode().IsRegular() {
				os.WriteFile(p, []byte(fmt.Sprint("changed ", rng.Int())), 0)
			}
		}
	}
	randomTree(t, rng, filepath.Join(dir, "added"), 1)
}

// TestEveryTreeSaveAcceptsRestoresExactly is the property behind "save and
// restore are symmetric": for random trees of every kind of entry, a
// snapshot (full, and a layer over it) restores exactly over the changed
// tree, and back again. It runs again on a file system that folds names,
// some entries respelt in another case, with the plan written out a few
// entries a block (spill.go).
func TestEveryTreeSaveAcceptsRestoresExactly(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			saveRestoreSymmetric(t, int64(seed), t.TempDir(), 0)
		})
	}
	// (Seeds whose trees go less deep: a path a hundred folders deep is
	// slow to reach through the folding file system's FUSE mount.)
	for _, seed := range []int{3, 4} {
		t.Run(fmt.Sprint("folding-spilled/", seed), func(t *testing.T) {
			saveRestoreSymmetric(t, int64(seed), foldingRoot(t), 1+seed%3)
		})
	}
}

// saveRestoreSymmetric is one seed of TestEveryTreeSaveAcceptsRestoresExactly
// over the folder dir, its plans written out spill entries a block (0: held).
func saveRestoreSymmetric(t *testing.T, seed int64, dir string, spill int) {
	rng := rand.New(rand.NewSource(seed))
	snaps := t.TempDir()
	randomTree(t, rng, dir, 0)
	_, m0 := layerSave(t, dir, snaps, 0, 0)
	s0 := state(t, dir)
	mutateRandomTree(t, rng, dir)
	if spill > 0 {
		respellSome(rng, dir)
	}
	_, m1 := layerSave(t, dir, snaps, 1, 0)
	s1 := state(t, dir)
	if spill > 0 {
		respellSome(rng, dir) // (the restores bring back the snapshots' spellings)
	}
	for i, step := range []struct {
		m    *Manifest
		want map[string]string
	}{{m0, s0}, {m1, s1}, {m0, s0}} {
		if _, err := Restore(context.Background(), dir, "", RestoreOptions{Manifest: step.m, spillAt: spill}); err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
		if d := diffStates(step.want, state(t, dir)); d != "" {
			t.Fatalf("restore %d is not exact:\n%s", i, d)
		}
	}
	// The full archive alone, too.
	if _, err := Restore(context.Background(), dir, filepath.Join(snaps, "1", "snapshot.tar.gz"), RestoreOptions{spillAt: spill}); err != nil && !strings.Contains(err.Error(), "layer") {
		t.Fatalf("restore --from: %v", err)
	}
	if _, err := Restore(context.Background(), dir, filepath.Join(snaps, "0", "snapshot.tar.gz"), RestoreOptions{spillAt: spill}); err != nil {
		t.Fatalf("restore --from the full archive: %v", err)
	}
	if d := diffStates(s0, state(t, dir)); d != "" {
		t.Fatalf("restore --from is not exact:\n%s", d)
	}
}

// respellSome gives a few entries under dir the other case of their name
// (files and folders), on a file system that folds names.
func respellSome(rng *rand.Rand, dir string) {
	var all []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			all = append(all, p)
		}
		return nil
	})
	for range 1 + len(all)/10 {
		p := all[rng.Intn(len(all))]
		os.Rename(p, filepath.Join(filepath.Dir(p), swapCase(filepath.Base(p)))) // (gone already, perhaps: its folder respelt)
	}
}

// makeWritable gives every folder under dir its owner's write bit back, so
// a test's folders can be removed.
func makeWritable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}
