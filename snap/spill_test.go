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
	"strings"
	"testing"
)

// TestSpilledPlanIsTheHeldPlan restores layer chains over two copies of a
// tree, one with the plan held, the other written out a few entries a
// block (spill.go): the results, refusals and trees must be the same. The
// trees are edited every way a restore undoes (kinds, modes, contents,
// folders added and removed, some closed to their owner), then also
// emptied but for their ignored files, and every file rewritten.
func TestSpilledPlanIsTheHeldPlan(t *testing.T) {
	gitEnv(t)
	defer func(v int) { spillAt = v }(spillAt)
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
				results := make([]string, 2)
				trees := make([]map[string]string, 2)
				for j, at := range []int{1 << 30, 1 + rng.Intn(5)} {
					spillAt = at
					copyDir := filepath.Join(t.TempDir(), "tree")
					if out, err := exec.Command("cp", "-a", dir, copyDir).CombinedOutput(); err != nil {
						t.Fatalf("cp: %v\n%s", err, out)
					}
					res, err := Restore(context.Background(), copyDir, "", RestoreOptions{Manifest: m})
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
				if _, err := Restore(context.Background(), dir, "", RestoreOptions{Manifest: m}); err != nil {
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
	defer func(v int) { spillAt = v }(spillAt)
	spillAt = 1
	for _, test := range spilledTests {
		t.Run(test.name, test.fn)
	}
}

// spilledTests are the tests TestRestoresWithThePlanSpilled runs again
// (those of one platform added in its files).
var spilledTests = []struct {
	name string
	fn   func(*testing.T)
}{
	{"LayerChainRoundTrip", TestLayerChainRoundTrip},
	{"RestoreAfterOneChangeFetchesOneFile", TestRestoreAfterOneChangeFetchesOneFile},
	{"DamagedManifestOrArchive", TestDamagedManifestOrArchive},
	{"CraftedManifestRefused", TestCraftedManifestRefused},
	{"FolderReplacedBySymlinkToSibling", TestFolderReplacedBySymlinkToSibling},
	{"RestoreSparesFilesIgnoredBySnapshotRules", TestRestoreSparesFilesIgnoredBySnapshotRules},
	{"IgnoredFolderInTheWay", TestIgnoredFolderInTheWay},
	{"SymlinkInTreeNeverRedirects", TestSymlinkInTreeNeverRedirects},
	{"UnchangedNeverWrong", TestUnchangedNeverWrong},
}

// TestFetchFromAnArchiveOutOfWalkOrder: the files a restore fetches from
// an archive read whole are met beside its plan in walk order; an archive
// holding two of them the other way round is read again, the files looked
// up by path, and one missing a file is refused with the tree untouched.
func TestFetchFromAnArchiveOutOfWalkOrder(t *testing.T) {
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
