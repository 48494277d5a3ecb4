//go:build unix

package snap

import (
	"archive/tar"
	"context"
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRestoreFromAnArchiveOutOfWalkOrder: an archive out of walk order (its
// entries shuffled: a file may come before its folder) is copied into walk
// order, in runs of a few entries here, and restored as that archive in
// walk order is — into an empty folder, and over a tree that differs, dry
// run and restore: the same result and tree. Nothing is left in TMPDIR.
// (Read against maps of every path, as it was before the copy, such an
// archive fails the restore: "folder d2/s0: no such file or directory".)
func TestRestoreFromAnArchiveOutOfWalkOrder(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	tmp := t.TempDir()
	ctx := context.Background()
	for seed := int64(1); seed <= 4; seed++ {
		perRun := int(seed*seed) + 1
		rng := rand.New(rand.NewSource(seed))
		src := archiveSource(t, rng)
		entries := tarEntriesOf(t, src)
		archives := []string{filepath.Join(t.TempDir(), "shuffled.tar.gz"), filepath.Join(t.TempDir(), "ordered.tar.gz")}
		if err := os.WriteFile(archives[1], craft(t, entries), 0o644); err != nil {
			t.Fatal(err)
		}
		rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		if err := os.WriteFile(archives[0], craft(t, entries), 0o644); err != nil {
			t.Fatal(err)
		}
		trees := editedTrees(t, seed, 2)
		for _, dry := range []bool{true, false} {
			var results [2]*RestoreResult
			for i := range trees {
				res, err := Restore(ctx, trees[i], archives[i], RestoreOptions{tempDir: tmp, DryRun: dry, sortRun: perRun})
				if err != nil {
					t.Fatalf("seed %d, dry run %v, %s: %v", seed, dry, filepath.Base(archives[i]), err)
				}
				results[i] = res
			}
			if !reflect.DeepEqual(results[0], results[1]) {
				t.Fatalf("seed %d, dry run %v: shuffled\n%+v\nin walk order\n%+v", seed, dry, results[0], results[1])
			}
		}
		if d := diffStates(state(t, trees[1]), state(t, trees[0])); d != "" {
			t.Fatalf("seed %d: the trees restored differ:\n%s", seed, d)
		}
		empty := t.TempDir()
		if _, err := Restore(ctx, empty, archives[0], RestoreOptions{tempDir: tmp, sortRun: perRun}); err != nil {
			t.Fatal(err)
		}
		if d := diffStates(state(t, src), state(t, empty)); d != "" {
			t.Fatalf("seed %d: restored into an empty folder:\n%s", seed, d)
		}
		changes, err := Diff(ctx, DiffOptions{FromArchive: archives[0], Root: src, Restore: RestoreOptions{tempDir: tmp, sortRun: perRun}})
		if err != nil || len(changes) > 0 {
			t.Fatalf("seed %d: diff of the tree the archive was made of: %v, %v", seed, changes, err)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Fatalf("left in TMPDIR: %v", left)
		}
	}
}

// TestArchiveOutOfWalkOrderRefused: what the copy's reader finds wrong
// with an archive out of walk order — a path listed twice, as a file or a
// folder, a file's content cut short — is refused as the archive's (naming
// it, but for the cut), before anything changes; nothing is left in TMPDIR; and a TMPDIR the
// copy cannot be written to is named in the error.
func TestArchiveOutOfWalkOrderRefused(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	tmp := t.TempDir()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		entries []tarEntry
		cut     bool
		want    string
	}{
		{"listed twice", []tarEntry{{name: "b", typ: tar.TypeReg, body: "1"}, {name: "a", typ: tar.TypeReg, body: "a"}, {name: "b", typ: tar.TypeReg, body: "2"}}, false, "duplicate entry"},
		{"a file and a folder", []tarEntry{{name: "c/", typ: tar.TypeDir}, {name: "a", typ: tar.TypeReg, body: "a"}, {name: "c", typ: tar.TypeReg, body: "c"}}, false, "duplicate entry"},
		{"cut short", []tarEntry{{name: "b", typ: tar.TypeReg, body: strings.Repeat("b", 5000)}, {name: "a", typ: tar.TypeReg, body: strings.Repeat("a", 50000)}}, true, "truncated"},
	} {
		archive := filepath.Join(t.TempDir(), "bad.tar.gz")
		b := craft(t, tc.entries)
		if tc.cut {
			b = b[:len(b)-40]
		}
		if err := os.WriteFile(archive, b, 0o644); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"keep": "mine"})
		before := state(t, dir)
		_, err := Restore(ctx, dir, archive, RestoreOptions{tempDir: tmp, sortRun: 2})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "TMPDIR") {
			t.Fatalf("%s: %v, want an error saying %q (the archive's, not the copy's)", tc.name, err, tc.want)
		}
		var ae *ArchiveError
		if !tc.cut && (!errors.As(err, &ae) || ae.Archive != archive) {
			t.Fatalf("%s: %v does not name the archive %s", tc.name, err, archive)
		}
		if d := diffStates(before, state(t, dir)); d != "" {
			t.Fatalf("%s: refused, yet the tree changed:\n%s", tc.name, d)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Fatalf("%s: left in TMPDIR: %v", tc.name, left)
		}
	}

	archive := filepath.Join(t.TempDir(), "shuffled.tar.gz")
	os.WriteFile(archive, craft(t, []tarEntry{{name: "b", typ: tar.TypeReg, body: "b"}, {name: "a", typ: tar.TypeReg, body: "a"}}), 0o644)
	_, err := Restore(ctx, t.TempDir(), archive, RestoreOptions{sortRun: 2, tempDir: filepath.Join(tmp, "missing")})
	if err == nil || !strings.Contains(err.Error(), "TMPDIR") || !strings.Contains(err.Error(), archive) {
		t.Fatalf("with TMPDIR missing: %v, want an error naming the archive and TMPDIR", err)
	}
}

// tarEntriesOf lists the tree at dir as tar entries, in walk order.
func tarEntriesOf(t *testing.T, dir string) []tarEntry {
	t.Helper()
	var out []tarEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out = append(out, tarEntry{name: rel, typ: tar.TypeSymlink, link: l})
		case fi.IsDir():
			out = append(out, tarEntry{name: rel + "/", typ: tar.TypeDir, mode: int64(fi.Mode().Perm())})
		default:
			b, _ := os.ReadFile(p)
			out = append(out, tarEntry{name: rel, typ: tar.TypeReg, mode: int64(fi.Mode().Perm()), body: string(b)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestArchiveImplyingFoldersIsCopied: an archive that leaves folders out,
// implying them (tar's of a list of files), in walk order or not, is
// copied into walk order with those folders listed, and restored beside
// the walk, never planned whole; as the plan over the whole archive takes
// a folder implied — kept as the tree has it, mode and all, or made 0755 —
// so does the copy: the same dry runs, results, trees and diffs, into an
// empty folder and over trees that differ (folders of other modes, files
// where folders were).
func TestArchiveImplyingFoldersIsCopied(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	var tune RestoreOptions
	whole := countWholePlans(&tune)
	tmp := t.TempDir()
	ctx := context.Background()
	for seed := int64(1); seed <= 4; seed++ {
		tune.sortRun = int(seed*seed) + 1
		// (the options of tree i's restores: the first planned whole)
		optsOf := func(i int, o RestoreOptions) RestoreOptions {
			o.sortRun, o.wholePlanned, o.planWhole, o.tempDir = tune.sortRun, tune.wholePlanned, i == 0, tmp
			return o
		}
		rng := rand.New(rand.NewSource(seed))
		src := archiveSource(t, rng)
		var entries []tarEntry
		for _, e := range tarEntriesOf(t, src) {
			if e.typ != tar.TypeDir || seed%2 == 0 && rng.Intn(2) == 0 { // (all left out, or half)
				entries = append(entries, e)
			}
		}
		ordered, shuffled := filepath.Join(t.TempDir(), "ordered.tar.gz"), filepath.Join(t.TempDir(), "shuffled.tar.gz")
		if err := os.WriteFile(ordered, craft(t, entries), 0o644); err != nil {
			t.Fatal(err)
		}
		rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		if err := os.WriteFile(shuffled, craft(t, entries), 0o644); err != nil {
			t.Fatal(err)
		}
		// Three copies of a tree: restored planned whole, from the archive
		// in walk order, and from the one shuffled.
		trees := editedTrees(t, seed, 3)
		for _, tree := range trees {
			chmodSomeFolders(t, rand.New(rand.NewSource(seed+300)), tree)
		}
		archives := []string{ordered, ordered, shuffled}
		run := func(i int, fn func() error) {
			t.Helper()
			*whole = 0
			if err := fn(); err != nil {
				t.Fatalf("seed %d, tree %d: %v", seed, i, err)
			}
			if i > 0 && *whole > 0 {
				t.Fatalf("seed %d, tree %d: the archive implying folders was planned whole", seed, i)
			}
		}
		var diffs [3][]Change
		for i := range trees {
			run(i, func() (err error) {
				diffs[i], err = Diff(ctx, DiffOptions{FromArchive: archives[i], Root: trees[i], Restore: optsOf(i, RestoreOptions{})})
				return err
			})
		}
		if !reflect.DeepEqual(diffs[1], diffs[0]) || !reflect.DeepEqual(diffs[2], diffs[0]) {
			t.Fatalf("seed %d: diffs\n%v\n%v\nwant (planned whole)\n%v", seed, diffs[1], diffs[2], diffs[0])
		}
		if len(diffs[0]) == 0 {
			t.Fatalf("seed %d: nothing to restore", seed)
		}
		for _, dry := range []bool{true, false} {
			var results [3]RestoreResult
			for i := range trees {
				run(i, func() error {
					res, err := Restore(ctx, trees[i], archives[i], optsOf(i, RestoreOptions{DryRun: dry}))
					if err == nil {
						results[i] = *res
					}
					return err
				})
			}
			if !reflect.DeepEqual(results[1], results[0]) || !reflect.DeepEqual(results[2], results[0]) {
				t.Fatalf("seed %d, dry run %v:\n%+v\n%+v\nwant (planned whole)\n%+v", seed, dry, results[1], results[2], results[0])
			}
		}
		for i := 1; i < len(trees); i++ {
			if d := diffStates(state(t, trees[0]), state(t, trees[i])); d != "" {
				t.Fatalf("seed %d: tree %d restored differs from the tree planned whole:\n%s", seed, i, d)
			}
		}
		// Into an empty folder, the archive in walk order is written as it
		// is read (see extract), the one shuffled copied first.
		var empty [2]string
		for i, a := range []string{ordered, shuffled} {
			empty[i] = t.TempDir()
			run(1, func() error { _, err := Restore(ctx, empty[i], a, optsOf(1, RestoreOptions{})); return err })
		}
		if d := diffStates(state(t, empty[0]), state(t, empty[1])); d != "" {
			t.Fatalf("seed %d: restored into an empty folder, shuffled against in walk order:\n%s", seed, d)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Fatalf("left in TMPDIR: %v", left)
		}
	}
}

// archiveSource makes a random tree to archive by hand, without
// node_modules or the ignored files (an ignored file the archive holds
// stands in a diff's way).
func archiveSource(t *testing.T, rng *rand.Rand) string {
	t.Helper()
	src := t.TempDir()
	genTree(t, rng, src, 80)
	os.RemoveAll(filepath.Join(src, "node_modules"))
	ignored, _ := filepath.Glob(filepath.Join(src, "*", "*", "*.ignored"))
	for _, p := range ignored {
		os.Remove(p)
	}
	return src
}

// editedTrees makes n copies of a random tree, edited, to restore over.
func editedTrees(t *testing.T, seed int64, n int) []string {
	t.Helper()
	trees := make([]string, n)
	for i := range trees {
		trees[i] = t.TempDir()
		genTree(t, rand.New(rand.NewSource(seed+100)), trees[i], 60)
		mutate(t, rand.New(rand.NewSource(seed+200)), trees[i])
	}
	return trees
}
