package snap

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"rewind.dev/snap/pathspec"
)

// TestSpilledPlanIsTheHeldPlan restores layer chains over two copies of a
// tree, one with the plan held, the other written out a few entries a
// block (spill.go): the results, refusals and trees must be the same. The
// trees are edited every way a restore undoes (kinds, modes, contents,
// folders added and removed, some closed to their owner), then also
// emptied but for their ignored files, and every file rewritten.
func TestSpilledPlanIsTheHeldPlan(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	tmp := t.TempDir()
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			dir, snaps := filepath.Join(t.TempDir(), "tree"), t.TempDir()
			os.Mkdir(dir, 0o755)
			genTree(t, rng, dir, 150)
			const n = 3
			states := layerChain(t, rng, dir, snaps, n)
			edits := []func(){
				func() { mutate(t, rng, dir); chmodSomeFolders(t, rng, dir) },
				func() { emptyButIgnored(t, dir) },
				func() { rewriteEveryFile(t, dir) },
				func() { closeSomeFolders(t, rng, dir) },
			}
			for k, edit := range edits {
				edit()
				i := rng.Intn(n)
				m, err := OpenManifest(filepath.Join(snaps, fmt.Sprint(i), "manifest"))
				if err != nil {
					t.Fatal(err)
				}
				// A dry run writes its plan outside the tree, and says
				// the same; a brief one only its counts.
				before := state(t, dir)
				dry := make([]*RestoreResult, 3)
				dryErr := make([]string, 3)
				for j, at := range []int{1 << 30, 1 + k%4, 1 + k%4} {
					dry[j], err = Restore(context.Background(), dir, "", RestoreOptions{tempDir: tmp, Manifest: m, DryRun: true, Brief: j == 2, spillAt: at})
					dryErr[j] = fmt.Sprint(err)
				}
				if !reflect.DeepEqual(dry[0], dry[1]) || dryErr[0] != dryErr[1] {
					t.Fatalf("edit %d, dry run of %d: held\n%+v (%s)\nspilled\n%+v (%s)", k, i, dry[0], dryErr[0], dry[1], dryErr[1])
				}
				if dryErr[0] == "<nil>" {
					brief := *dry[0]
					brief.WrittenList, brief.ModeList = PathList{}, PathList{}
					if !reflect.DeepEqual(&brief, dry[2]) || dryErr[2] != "<nil>" {
						t.Fatalf("edit %d, brief dry run of %d: %+v (%s), want %+v", k, i, dry[2], dryErr[2], &brief)
					}
				}
				if d := diffStates(before, state(t, dir)); d != "" {
					t.Fatalf("edit %d: a dry run changed the tree:\n%s", k, d)
				}
				if left, _ := filepath.Glob(filepath.Join(tmp, "rewind-plan-*")); len(left) > 0 {
					t.Fatalf("edit %d: a dry run left %v", k, left)
				}
				results := make([]string, 2)
				trees := make([]map[string]string, 2)
				for j, at := range []int{1 << 30, 1 + rng.Intn(5)} {
					copyDir := filepath.Join(t.TempDir(), "tree")
					if out, err := exec.Command("cp", "-a", dir, copyDir).CombinedOutput(); err != nil {
						t.Fatalf("cp: %v\n%s", err, out)
					}
					res, err := Restore(context.Background(), copyDir, "", RestoreOptions{tempDir: tmp, Manifest: m, spillAt: at})
					results[j] = strings.ReplaceAll(fmt.Sprintf("%+v %v", res, err), copyDir, "TREE")
					trees[j] = state(t, copyDir)
					makeWritable(copyDir) // (for TempDir's removal)
					if err == nil {
						if got, _ := splitIgnored(trees[j]); diffStates(states[i], got) != "" {
							t.Fatalf("edit %d, restore of %d (spill at %d) differs:\n%s", k, i, at, diffStates(states[i], got))
						}
					}
				}
				if results[0] != results[1] {
					t.Fatalf("edit %d, restore of %d: held\n%s\nspilled\n%s", k, i, results[0], results[1])
				}
				if !reflect.DeepEqual(trees[0], trees[1]) {
					t.Fatalf("edit %d, restore of %d: the trees differ:\n%s", k, i, diffStates(trees[0], trees[1]))
				}
				if _, err := Restore(context.Background(), dir, "", RestoreOptions{tempDir: tmp, Manifest: m}); err != nil {
					t.Fatalf("edit %d: restore of %d: %v", k, i, err)
				}
				makeWritable(dir)
			}
		})
	}
}

// emptyButIgnored removes every entry of dir but its ignored files and the
// folders above them, as a person emptying a tree by hand (rm -r *) would.
func emptyButIgnored(t *testing.T, dir string) {
	t.Helper()
	makeWritable(dir)
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() == "node_modules" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, de.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// rewriteEveryFile gives every file not ignored new content.
func rewriteEveryFile(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.Contains(p, "node_modules") && !strings.HasSuffix(p, ".ignored") {
			if err := os.WriteFile(p, []byte("rewritten "+p), 0); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
}

// closeSomeFolders makes a few folders read-only to their owner, one of
// them holding a file the restore deletes.
func closeSomeFolders(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	var folders []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir && !strings.Contains(p, "node_modules") {
			folders = append(folders, p)
		}
		return nil
	})
	for k := 0; k < 3 && len(folders) > 0; k++ {
		d := folders[rng.Intn(len(folders))]
		os.WriteFile(filepath.Join(d, "added-while-open"), []byte("x"), 0o644)
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRestoresWithThePlanSpilled runs the restore tests of layer chains,
// refusals, unreadable entries and ignored files with the plan written out
// an entry a block: what they prove of the held plan holds of it too.
func TestRestoresWithThePlanSpilled(t *testing.T) {
	t.Parallel()
	for _, test := range spilledTests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			test.fn(t, 1)
		})
	}
}

// spilledTests are the tests TestRestoresWithThePlanSpilled runs again
// (those of one platform added in its files).
var spilledTests = []struct {
	name string
	fn   func(t *testing.T, spill int)
}{
	{"LayerChainRoundTrip", testLayerChainRoundTrip},
	{"RestoreAfterOneChangeFetchesOneFile", testRestoreAfterOneChangeFetchesOneFile},
	{"DamagedManifestOrArchive", testDamagedManifestOrArchive},
	{"CraftedManifestRefused", testCraftedManifestRefused},
	{"FolderReplacedBySymlinkToSibling", testFolderReplacedBySymlinkToSibling},
	{"RestoreSparesFilesIgnoredBySnapshotRules", testRestoreSparesFilesIgnoredBySnapshotRules},
	{"IgnoredFolderInTheWay", testIgnoredFolderInTheWay},
	{"SymlinkInTreeNeverRedirects", testSymlinkInTreeNeverRedirects},
	{"UnchangedNeverWrong", testUnchangedNeverWrong},
}

// TestFetchFromAnArchiveOutOfWalkOrder: the files a restore fetches from
// an archive read whole are met beside its plan in walk order; an archive
// holding two of them the other way round is read again, the files looked
// up by path, and one missing a file is refused with the tree untouched.
func TestFetchFromAnArchiveOutOfWalkOrder(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	ctx := context.Background()
	src, snaps := t.TempDir(), t.TempDir()
	genTree(t, rand.New(rand.NewSource(3)), src, 200)
	os.RemoveAll(filepath.Join(src, "node_modules"))
	res, m := layerSave(t, src, snaps, 0, 0)
	want, _ := splitIgnored(state(t, src))
	archive := res.Manifest.Header.Archive
	orig, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	for _, drop := range []bool{false, true} {
		rewriteArchive(t, archive, orig, drop)
		dir := t.TempDir()
		_, err := Restore(ctx, dir, "", RestoreOptions{Manifest: m})
		if drop {
			var ae *ArchiveError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "missing, though its manifest says it is here") {
				t.Fatalf("a file missing from the archive: %v", err)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Fatalf("refused, yet %s holds %v", dir, left)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if d := diffStates(want, state(t, dir)); d != "" {
			t.Fatalf("restored from an archive out of walk order:\n%s", d)
		}
	}
}

// rewriteArchive writes orig (a gzip'd tar) to name with its first two
// files in a row swapped, or, with drop, the first of them left out: one
// gzip member, with the first member's header.
func rewriteArchive(t *testing.T, name string, orig []byte, drop bool) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(orig))
	if err != nil {
		t.Fatal(err)
	}
	type member struct {
		h    *tar.Header
		body []byte
	}
	var all []member
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, member{h, b})
	}
	swapped := false
	for i := 1; i < len(all); i++ {
		if all[i-1].h.Typeflag == tar.TypeReg && all[i].h.Typeflag == tar.TypeReg && path.Dir(all[i-1].h.Name) == path.Dir(all[i].h.Name) && all[i].h.Size > 0 {
			if drop {
				all = append(all[:i-1], all[i:]...)
			} else {
				all[i-1], all[i] = all[i], all[i-1]
			}
			swapped = true
			break
		}
	}
	if !swapped {
		t.Fatal("no two files in a row")
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Header = zr.Header
	tw := tar.NewWriter(zw)
	for _, mb := range all {
		if err := tw.WriteHeader(mb.h); err != nil {
			t.Fatal(err)
		}
		tw.Write(mb.body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRestorePathsSpilled: a restore limited to paths writes its plan out
// in blocks as any restore over a tree does, and does what the plan held
// whole does: the same refusals (a file of the tree where a selected path
// needs a folder, a folder replaced that holds paths outside them, a path
// that selects nothing), the same result, the same tree.
func TestRestorePathsSpilled(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	specs := [][]string{{"d1"}, {"d2/s0", "d3/s1/"}, {"*.empty"}, {":(glob)d*/s2/*", ":!d4"}, {"d0", ":^d0/s1"}, {"d5/s1/*"}, {"d*/s0/f1*"}}
	refused, done := 0, 0
	for seed := int64(1); seed <= 14; seed++ {
		rng := rand.New(rand.NewSource(seed))
		base, snaps := t.TempDir(), t.TempDir()
		genTree(t, rng, base, 150)
		layerChain(t, rng, base, snaps, 2)
		mutate(t, rng, base)
		mutate(t, rng, base)
		spec := specs[int(seed)%len(specs)]
		type outcome struct {
			res  *RestoreResult
			err  string
			tree map[string]string
		}
		var outs []outcome
		for _, at := range []int{1 << 30, 1 + int(seed)%4} {
			dir := t.TempDir()
			if out, err := exec.Command("cp", "-a", base+"/.", dir).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, out)
			}
			m, err := OpenManifest(filepath.Join(snaps, "0", "manifest"))
			if err != nil {
				t.Fatal(err)
			}
			ps, err := pathspec.Parse(spec, pathspec.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Restore(context.Background(), dir, "", RestoreOptions{Manifest: m, Paths: ps, spillAt: at})
			outs = append(outs, outcome{res, fmt.Sprint(err), state(t, dir)})
		}
		held, spilled := outs[0], outs[1]
		if held.err != spilled.err || !reflect.DeepEqual(held.res, spilled.res) {
			t.Fatalf("seed %d, paths %q: held whole %+v (%s); in blocks %+v (%s)", seed, spec, held.res, held.err, spilled.res, spilled.err)
		}
		if d := diffStates(held.tree, spilled.tree); d != "" {
			t.Fatalf("seed %d, paths %q: the trees differ, held whole and in blocks:\n%s", seed, spec, d)
		}
		if held.err != "<nil>" {
			refused++
		} else if held.res.Written+held.res.Deleted > 0 {
			done++
		}
	}
	if refused == 0 || done == 0 {
		t.Fatalf("%d refused, %d restored: the seeds no longer try both", refused, done)
	}
	// Each refusal with the paths it is about in blocks of their own: a
	// file where the snapshot has a folder holding a selected file, and a
	// folder the snapshot has a file for, holding a path left out.
	for _, c := range []struct {
		name string
		spec []string
		edit func(dir string)
	}{
		{"a file where a selected path needs a folder", []string{"a/f5"}, func(dir string) {
			os.RemoveAll(filepath.Join(dir, "a"))
			os.WriteFile(filepath.Join(dir, "a"), []byte("a file now"), 0o644)
		}},
		{"a replaced folder holding a path left out", []string{"b", ":!b/y"}, func(dir string) {
			os.Remove(filepath.Join(dir, "b"))
			writeTree(t, dir, map[string]string{"b/x": "x", "b/y": "y", "b/z": "z"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, snaps := t.TempDir(), t.TempDir()
			files := map[string]string{"b": "a file", "c": "c"}
			for i := range 9 {
				files[fmt.Sprintf("a/f%d", i)] = fmt.Sprint(i)
			}
			writeTree(t, dir, files)
			layerSave(t, dir, snaps, 0, 0)
			c.edit(dir)
			before := state(t, dir)
			for _, at := range []int{1 << 30, 1, 2} {
				m, err := OpenManifest(filepath.Join(snaps, "0", "manifest"))
				if err != nil {
					t.Fatal(err)
				}
				ps, err := pathspec.Parse(c.spec, pathspec.Options{})
				if err != nil {
					t.Fatal(err)
				}
				_, err = Restore(context.Background(), dir, "", RestoreOptions{Manifest: m, Paths: ps, spillAt: at})
				var sel *SelectionError
				if !errors.As(err, &sel) {
					t.Fatalf("blocks of %d: %v, want it refused", at, err)
				}
				if d := diffStates(before, state(t, dir)); d != "" {
					t.Fatalf("blocks of %d: refused, yet the tree changed:\n%s", at, d)
				}
			}
		})
	}
}

// TestDeletionsListedByTheirFolder: a restore lists a folder it deletes
// once for all it held, and counts its files (its folders apart); one limited to paths lists
// each path. Planned whole or in blocks, and in a dry run, alike.
func TestDeletionsListedByTheirFolder(t *testing.T) {
	t.Parallel()
	for _, at := range []int{1 << 30, 1} {
		for _, limited := range []bool{false, true} {
			dir, snaps := t.TempDir(), t.TempDir()
			writeTree(t, dir, map[string]string{"keep.txt": "k", "x/kept": "x"})
			layerSave(t, dir, snaps, 0, 0)
			writeTree(t, dir, map[string]string{"gone/a": "a", "gone/sub/b": "b", "gone/sub/c": "c", "x/y": "y", "z": "z"})
			want := []string{"gone/", "x/y", "z"}
			var opts RestoreOptions
			if limited {
				want = []string{"gone/", "gone/a", "gone/sub/", "gone/sub/b", "gone/sub/c", "x/y", "z"}
				ps, err := pathspec.Parse([]string{"gone", "x", "z"}, pathspec.Options{})
				if err != nil {
					t.Fatal(err)
				}
				opts.Paths = ps
			}
			opts.spillAt = at
			for _, dry := range []bool{true, false} {
				m, err := OpenManifest(filepath.Join(snaps, "0", "manifest"))
				if err != nil {
					t.Fatal(err)
				}
				opts.Manifest, opts.DryRun = m, dry
				res, err := Restore(context.Background(), dir, "", opts)
				if err != nil {
					t.Fatal(err)
				}
				if res.Deleted != 5 || res.Folders != 2 || !reflect.DeepEqual(slices.Collect(res.DeletedList.All()), want) {
					t.Errorf("blocks of %d, limited %v, dry run %v: deleted %d files, %d folders %q, want 5 files, 2 folders %q", at, limited, dry, res.Deleted, res.Folders, slices.Collect(res.DeletedList.All()), want)
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, "gone")); !os.IsNotExist(err) {
				t.Errorf("gone: %v", err)
			}
		}
	}
}

// TestDryRunWritesItsPlanOutside: a dry run whose plan is too big to hold
// writes it to a temporary folder outside the tree (none is made inside),
// says what a held one says, and leaves nothing behind; where no such
// folder can be made it says so.
func TestDryRunWritesItsPlanOutside(t *testing.T) {
	t.Parallel()
	dir, snaps := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("d%d/f%d", i%3, i)] = fmt.Sprint(i)
	}
	writeTree(t, dir, files)
	layerSave(t, dir, snaps, 0, 0)
	rewriteEveryFile(t, dir)
	writeTree(t, dir, map[string]string{"new/x": "x"})
	before := state(t, dir)
	tmp := t.TempDir()
	dryRun := func(at int, tmp string) (*RestoreResult, error) {
		m, err := OpenManifest(filepath.Join(snaps, "0", "manifest"))
		if err != nil {
			t.Fatal(err)
		}
		return Restore(context.Background(), dir, "", RestoreOptions{Manifest: m, DryRun: true, spillAt: at, tempDir: tmp})
	}
	held, err := dryRun(1<<30, tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dryRun(1, filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "temporary folder") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("no temporary folder to write the plan to: %v", err)
	}
	spilled, err := dryRun(1, tmp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(held, spilled) || held.Written != 20 || held.WrittenList.Len() != 20 || held.Deleted != 1 || held.Folders != 1 || held.DeletedList.Len() != 1 {
		t.Fatalf("held %+v\nwritten out %+v", held, spilled)
	}
	if d := diffStates(before, state(t, dir)); d != "" {
		t.Fatalf("a dry run changed the tree:\n%s", d)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Fatalf("a dry run left %v", left)
	}
}

// TestSpilledDiffIsTheHeldDiff lists the changes between an archive and
// its tree edited every way a restore undoes, with the plan held and
// written out a few entries a block (diffArchive reads it back): the
// lists must be the same, in path order, and nothing left in TMPDIR. An
// error from the caller's function ends the listing and is returned.
func TestSpilledDiffIsTheHeldDiff(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	tmp := t.TempDir()
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			dir := filepath.Join(t.TempDir(), "tree")
			os.Mkdir(dir, 0o755)
			genTree(t, rng, dir, 150)
			snap := create(t, dir, filepath.Join(t.TempDir(), "snap.tar.gz"))
			edits := []func(){
				func() { mutate(t, rng, dir); chmodSomeFolders(t, rng, dir) },
				func() { closeSomeFolders(t, rng, dir) },
				func() { rewriteEveryFile(t, dir) },
				func() { emptyButIgnored(t, dir) },
			}
			for k, edit := range edits {
				edit()
				held, err := Diff(context.Background(), DiffOptions{FromArchive: snap.Archive, Root: dir, Restore: RestoreOptions{tempDir: tmp, spillAt: 1 << 30}})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.IsSortedFunc(held, func(a, b Change) int { return comparePaths(a.Path, b.Path) }) {
					t.Fatalf("edit %d: held changes out of path order: %v", k, held)
				}
				at := 1 + rng.Intn(5)
				if len(held) <= at {
					t.Fatalf("edit %d: %d changes, too few to write the plan out %d entries a block", k, len(held), at)
				}
				spilled, err := Diff(context.Background(), DiffOptions{FromArchive: snap.Archive, Root: dir, Restore: RestoreOptions{tempDir: tmp, spillAt: at}})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(spilled, held) {
					t.Fatalf("edit %d, spill at %d: changes\n%v\nwant (held)\n%v", k, at, spilled, held)
				}
				stop := errors.New("stop")
				n := 0
				err = diffArchive(context.Background(), dir, snap.Archive, RestoreOptions{tempDir: tmp, spillAt: at}, func(Change) error {
					if n++; n == 3 {
						return stop
					}
					return nil
				})
				if err != stop || n != 3 {
					t.Fatalf("edit %d: the function's error ended it after %d changes with %v, want after 3 with %v", k, n, err, stop)
				}
				if left, _ := filepath.Glob(filepath.Join(tmp, "rewind-*")); len(left) > 0 {
					t.Fatalf("edit %d: the diff left %v", k, left)
				}
			}
			makeWritable(dir)
		})
	}
}

// TestArchivePathsOverWhatDiffers restores paths of a whole archive (no
// manifest) over an edited tree planned over the whole tree, over what
// differs, and over what differs written out a few entries a block: the
// results, refusals and trees must be the same (a refusal for a path
// outside the paths in the way may name another path, in blocks).
func TestArchivePathsOverWhatDiffers(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	var tune RestoreOptions
	whole := countWholePlans(&tune)
	specs := [][]string{{"d1"}, {"d2/s0", "d3/s1/"}, {"*.empty"}, {":(glob)d*/s2/*", ":!d4"}, {"d0", ":^d0/s1"}, {"d5/s1/*"}, {"d*/s0/f1*"}}
	refused, done := 0, 0
	for seed := int64(1); seed <= 14; seed++ {
		rng := rand.New(rand.NewSource(seed))
		base := t.TempDir()
		genTree(t, rng, base, 150)
		snap := create(t, base, filepath.Join(t.TempDir(), "snap.tar.gz"))
		mutate(t, rng, base)
		mutate(t, rng, base)
		// (a folder the tree lacks, whose files are partly selected)
		os.RemoveAll(filepath.Join(base, fmt.Sprintf("d%d/s%d", seed%6, seed%3)))
		spec := specs[int(seed)%len(specs)]
		type outcome struct {
			res  *RestoreResult
			err  string
			sel  bool // a SelectionError
			tree map[string]string
		}
		var outs []outcome
		for _, how := range []struct {
			sparse bool
			at     int
		}{{false, 1 << 30}, {true, 1 << 30}, {true, 1 + int(seed)%4}} {
			dir := t.TempDir()
			if out, err := exec.Command("cp", "-a", base+"/.", dir).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, out)
			}
			*whole = 0
			ps, err := pathspec.Parse(spec, pathspec.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Restore(context.Background(), dir, snap.Archive, RestoreOptions{Paths: ps, planWhole: !how.sparse, spillAt: how.at, wholePlanned: tune.wholePlanned})
			if how.sparse && *whole > 0 {
				t.Fatalf("seed %d, paths %q: planned over the whole archive and tree", seed, spec)
			}
			var sel *SelectionError
			outs = append(outs, outcome{res, strings.ReplaceAll(fmt.Sprint(err), dir, "TREE"), errors.As(err, &sel), state(t, dir)})
		}
		for i, o := range outs[1:] {
			if i == 1 && o.sel && outs[0].sel {
				// (in blocks, the first path found outside the paths may be another)
				o.err = outs[0].err
			}
			if o.err != outs[0].err || !reflect.DeepEqual(o.res, outs[0].res) {
				t.Fatalf("seed %d, paths %q, plan %d: %+v (%s); over the whole tree %+v (%s)", seed, spec, i+1, o.res, o.err, outs[0].res, outs[0].err)
			}
			if d := diffStates(outs[0].tree, o.tree); d != "" {
				t.Fatalf("seed %d, paths %q, plan %d: the trees differ:\n%s", seed, spec, i+1, d)
			}
		}
		if outs[0].err != "<nil>" {
			refused++
		} else if outs[0].res.Written+outs[0].res.Deleted > 0 {
			done++
		}
	}
	if refused == 0 || done == 0 {
		t.Fatalf("%d refused, %d restored: the seeds no longer try both", refused, done)
	}
}

// countWholePlans counts the plans made over a whole archive and tree
// by the restores given opts.
func countWholePlans(opts *RestoreOptions) *int {
	n := new(int)
	opts.wholePlanned = func() { *n++ }
	return n
}
