package snap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"rewind.dev/internal/fileid"
	"rewind.dev/snap/foldtest"
	"rewind.dev/snap/pathspec"
)

const (
	nfc = "caf\u00e9.txt"  // é as one code point
	nfd = "cafe\u0301.txt" // e and a combining accent
)

func TestFoldingKey(t *testing.T) {
	t.Parallel()
	both := Folding{Case: true, Norm: true}
	tests := []struct {
		fold Folding
		a, b string
		same bool
	}{
		{Folding{}, "README.md", "Readme.md", false},
		{Folding{}, nfc, nfd, false},
		{Folding{}, "a", "a", true},
		{both, "README.md", "Readme.md", true},
		{both, "src/Main.go", "SRC/main.GO", true},
		{both, nfc, nfd, true},
		{both, strings.ToUpper(nfc), nfd, true},
		{both, "a.txt", "b.txt", false},
		{both, "straße", "STRASSE", true}, // full folding, as APFS: a candidate only
		{Folding{Case: true}, "README.md", "readme.md", true},
		{Folding{Case: true}, nfc, nfd, false},
		{Folding{Norm: true}, nfc, nfd, true},
		{Folding{Norm: true}, "README.md", "readme.md", false},
	}
	for _, tt := range tests {
		if got := tt.fold.Key(tt.a) == tt.fold.Key(tt.b); got != tt.same {
			t.Errorf("%v: Key(%q) == Key(%q) is %v, want %v", tt.fold, tt.a, tt.b, got, tt.same)
		}
	}
	for _, name := range []string{"README.md", nfc, nfd, "\xff"} {
		if k := (Folding{}).Key(name); k != name {
			t.Errorf("byte-for-byte Key(%q) = %q, want it unchanged", name, k)
		}
	}
}

// Linux's own file systems (ext4, tmpfs) fold nothing: names are compared
// byte for byte, so a restore and a diff behave as before folding existed
// (the rest of the suite runs there).
func TestProbeFoldingByteForByte(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"README.md": "", nfc: ""})
	if f := ProbeFolding(dir); f.Folds() {
		t.Errorf("ProbeFolding(%s) = %v, want names compared byte for byte", dir, f)
	}
	empty := t.TempDir() // nothing to look up: its own name in its parent
	if f := ProbeFolding(empty); f.Folds() {
		t.Errorf("ProbeFolding of an empty folder = %v, want names compared byte for byte", f)
	}
}

// foldingRoot returns a project folder on a file system that folds names
// as APFS does, or skips the test where none can be mounted.
func foldingRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(foldtest.Dir(t), "Project")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestProbeFoldingFolds(t *testing.T) {
	t.Parallel()
	root := foldingRoot(t)
	want := Folding{Case: true, Norm: true}
	if f := ProbeFolding(root); f != want { // empty: found from its own name
		t.Errorf("ProbeFolding of an empty folder = %v, want %v", f, want)
	}
	writeTree(t, root, map[string]string{"README.md": "", nfc: ""})
	if f := ProbeFolding(root); f != want {
		t.Errorf("ProbeFolding = %v, want %v", f, want)
	}
}

// ls lists a folder's names as the file system spells them.
func ls(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func rename(t *testing.T, root, from, to string) {
	t.Helper()
	if err := os.Rename(filepath.Join(root, from), filepath.Join(root, to)); err != nil {
		t.Fatal(err)
	}
}

func diffNow(t *testing.T, root string, m *Manifest) []Change {
	t.Helper()
	chs, err := Diff(context.Background(), DiffOptions{From: m, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return chs
}

// restoreTo restores the snapshot res over root, reading the archive
// whole or (with the manifest) only what differs, and returns the result.
func restoreTo(t *testing.T, root string, res *Result, withManifest bool) *RestoreResult {
	t.Helper()
	opts := RestoreOptions{}
	if withManifest {
		opts.Manifest = res.Manifest
	}
	r, err := Restore(context.Background(), root, res.Archive, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The case: the snapshot holds README.md, the tree Readme.md (the
// same file on macOS). A restore renames it in place and writes its
// content; it deletes nothing, and its backup restores the tree's spelling.
func TestRestoreRenamesInPlace(t *testing.T) {
	t.Parallel()
	for _, withManifest := range []bool{false, true} {
		t.Run(map[bool]string{false: "archive", true: "manifest"}[withManifest], func(t *testing.T) {
			root := foldingRoot(t)
			out := t.TempDir()
			writeTree(t, root, map[string]string{"README.md": "v1\n", "main.go": "package main\n"})
			snap := create(t, root, filepath.Join(out, "s.tar.gz"))
			rename(t, root, "README.md", "Readme.md")
			writeTree(t, root, map[string]string{"Readme.md": "v2\n"})
			before := state(t, root)

			want := []Change{{Type: "change", Op: OpModified, Path: "README.md", Kind: "file", TreePath: "Readme.md"}}
			if got := diffNow(t, root, snap.Manifest); !reflect.DeepEqual(got, want) {
				t.Fatalf("diff = %+v, want %+v", got, want)
			}
			backup := create(t, root, filepath.Join(out, "backup.tar.gz"))

			r := restoreTo(t, root, snap, withManifest)
			if r.Deleted != 0 || r.Written != 1 || r.Renamed != 1 ||
				!reflect.DeepEqual(r.RenamedList, []Rename{{From: "Readme.md", To: "README.md"}}) {
				t.Fatalf("restore = %+v, want README.md renamed and written, nothing deleted", r)
			}
			if got := ls(t, root); !slices.Equal(got, []string{"README.md", "main.go"}) {
				t.Fatalf("after the restore the tree lists %q", got)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "README.md")); string(b) != "v1\n" {
				t.Fatalf("README.md holds %q, want v1", b)
			}
			if chs := diffNow(t, root, snap.Manifest); len(chs) != 0 {
				t.Fatalf("the tree differs from the snapshot it was restored to: %+v", chs)
			}

			// Undone: the backup brings back the tree's spelling and content.
			r = restoreTo(t, root, backup, withManifest)
			if r.Deleted != 0 || r.Renamed != 1 {
				t.Fatalf("undo = %+v, want one rename, nothing deleted", r)
			}
			if d := diffStates(before, state(t, root)); d != "" {
				t.Fatalf("undo left the tree otherwise:\n%s", d)
			}
			if got := ls(t, root); !slices.Equal(got, []string{"Readme.md", "main.go"}) {
				t.Fatalf("after the undo the tree lists %q", got)
			}
		})
	}
}

// Only the case changed: the diff says renamed (not deleted and added),
// and the restore renames without writing.
func TestDiffRenamedNotDeletedAndAdded(t *testing.T) {
	t.Parallel()
	root := foldingRoot(t)
	writeTree(t, root, map[string]string{"README.md": "same\n"})
	snap := create(t, root, filepath.Join(t.TempDir(), "s.tar.gz"))
	rename(t, root, "README.md", "readme.md")
	want := []Change{{Type: "change", Op: OpRenamed, Path: "README.md", Kind: "file", TreePath: "readme.md"}}
	if got := diffNow(t, root, snap.Manifest); !reflect.DeepEqual(got, want) {
		t.Fatalf("diff = %+v, want %+v", got, want)
	}
	chs, err := Diff(context.Background(), DiffOptions{FromArchive: snap.Archive, Root: root})
	if err != nil || !reflect.DeepEqual(chs, want) {
		t.Fatalf("diff of the archive = %+v, %v; want %+v", chs, err, want)
	}
	r := restoreTo(t, root, snap, true)
	if r.Written != 0 || r.Deleted != 0 || r.Renamed != 1 || r.Unchanged != 1 {
		t.Fatalf("restore = %+v, want one rename, its content unchanged", r)
	}
	if got := ls(t, root); !slices.Equal(got, []string{"README.md"}) {
		t.Fatalf("after the restore the tree lists %q", got)
	}
}

// The two normalisation forms of a name are one file: no change, and a
// restore leaves it as it is (a rename between forms that look the same
// could never settle where the file system stores one form).
func TestNormalisationFormsAreOneFile(t *testing.T) {
	t.Parallel()
	root := foldingRoot(t)
	writeTree(t, root, map[string]string{nfc: "x\n"})
	snap := create(t, root, filepath.Join(t.TempDir(), "s.tar.gz"))
	rename(t, root, nfc, nfd)
	if got := ls(t, root); !slices.Equal(got, []string{nfd}) {
		t.Fatalf("the tree lists %q, want the NFD form", got)
	}
	if chs := diffNow(t, root, snap.Manifest); len(chs) != 0 {
		t.Fatalf("diff = %+v, want no change", chs)
	}
	for _, withManifest := range []bool{false, true} {
		r := restoreTo(t, root, snap, withManifest)
		if r.Written != 0 || r.Deleted != 0 || r.Renamed != 0 || r.Unchanged != 1 {
			t.Fatalf("restore = %+v, want nothing done", r)
		}
	}
	if got := ls(t, root); !slices.Equal(got, []string{nfd}) {
		t.Fatalf("after the restore the tree lists %q", got)
	}
}

// A folder whose name differs only in case is renamed with what it holds:
// its unchanged files stay, a changed one is written, nothing is deleted.
func TestRestoreFolderDifferingInCase(t *testing.T) {
	t.Parallel()
	for _, withManifest := range []bool{false, true} {
		t.Run(map[bool]string{false: "archive", true: "manifest"}[withManifest], func(t *testing.T) {
			root := foldingRoot(t)
			writeTree(t, root, map[string]string{"Docs/a.txt": "a\n", "Docs/b.txt": "b\n", "Docs/Sub/c.txt": "c\n"})
			snap := create(t, root, filepath.Join(t.TempDir(), "s.tar.gz"))
			rename(t, root, "Docs", "docs")
			writeTree(t, root, map[string]string{"docs/b.txt": "B\n"})
			ino := inode(t, filepath.Join(root, "docs", "a.txt"))

			want := []Change{
				{Type: "change", Op: OpRenamed, Path: "Docs", Kind: "dir", TreePath: "docs"},
				{Type: "change", Op: OpModified, Path: "Docs/b.txt", Kind: "file", TreePath: "docs/b.txt"},
			}
			if got := diffNow(t, root, snap.Manifest); !reflect.DeepEqual(got, want) {
				t.Fatalf("diff = %+v, want %+v", got, want)
			}
			r := restoreTo(t, root, snap, withManifest)
			if r.Deleted != 0 || r.Written != 1 || r.Renamed != 1 {
				t.Fatalf("restore = %+v, want Docs renamed, b.txt written, nothing deleted", r)
			}
			if got := ls(t, root); !slices.Equal(got, []string{"Docs"}) {
				t.Fatalf("after the restore the tree lists %q", got)
			}
			if got := inode(t, filepath.Join(root, "Docs", "a.txt")); got != ino {
				t.Errorf("Docs/a.txt was replaced (inode %d, was %d)", got, ino)
			}
			if chs := diffNow(t, root, snap.Manifest); len(chs) != 0 {
				t.Fatalf("the tree differs from the snapshot it was restored to: %+v", chs)
			}
		})
	}
}

func inode(t *testing.T, name string) uint64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fileid.Inode(fi)
}

// A snapshot taken where names are compared byte for byte (Linux) may hold
// two names that are one on a folding file system: restored there, it is
// refused with both names before anything is written.
func TestRestoreRefusesNamesThatFoldToOne(t *testing.T) {
	t.Parallel()
	linux := t.TempDir()
	writeTree(t, linux, map[string]string{"README.md": "upper\n", "Readme.md": "mixed\n", "a.txt": "a\n", "Docs/x": "1\n", "docs/y": "2\n"})
	snap := create(t, linux, filepath.Join(t.TempDir(), "s.tar.gz"))

	root := foldingRoot(t)
	writeTree(t, root, map[string]string{"keep.txt": "mine\n"})
	before := state(t, root)
	for _, withManifest := range []bool{false, true} {
		opts := RestoreOptions{}
		if withManifest {
			opts.Manifest = snap.Manifest
		}
		for _, dry := range []bool{true, false} {
			opts.DryRun = dry
			_, err := Restore(context.Background(), root, snap.Archive, opts)
			if err == nil {
				t.Fatalf("manifest %v, dry run %v: restored; want a refusal", withManifest, dry)
			}
			msg := err.Error()
			if !(strings.Contains(msg, "README.md") && strings.Contains(msg, "Readme.md") ||
				strings.Contains(msg, "Docs") && strings.Contains(msg, "docs")) {
				t.Errorf("manifest %v: error %q names not both spellings", withManifest, msg)
			}
			if d := diffStates(before, state(t, root)); d != "" {
				t.Fatalf("manifest %v, dry run %v: a refused restore changed the tree:\n%s", withManifest, dry, d)
			}
		}
	}
	// The same snapshot restores as before where names are not folded.
	other := t.TempDir()
	if _, err := Restore(context.Background(), other, snap.Archive, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(state(t, linux), state(t, other)); d != "" {
		t.Fatalf("restored where names are compared byte for byte:\n%s", d)
	}
}

// TestSparseRestoreOnAFoldingFileSystem: on a file system that folds
// names, a restore from a manifest plans over what differs too (pairs
// spelt the same on both sides left out, spellings paired among the rest):
// over random edits and entries respelt (case swapped, files and folders;
// a name's other normalisation form), its dry run says what one planned
// over the whole tree says, and the restore brings back the snapshot's
// tree, spellings and all.
func TestSparseRestoreOnAFoldingFileSystem(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for seed := int64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewSource(seed))
			root, snaps := foldingRoot(t), t.TempDir()
			genTree(t, rng, root, 80)
			writeTree(t, root, map[string]string{"d0/" + nfc: "accent"})
			const n = 3
			states := layerChain(t, rng, root, snaps, n)
			renamed := 0
			for k := range 5 {
				i := rng.Intn(n)
				mutate(t, rng, root)
				respell(t, rng, root)
				m, err := OpenManifest(filepath.Join(snaps, fmt.Sprint(i), "manifest"))
				if err != nil {
					t.Fatal(err)
				}
				// From the manifest, limited to paths or not, and from the
				// first snapshot's archive read whole (the others are
				// layers).
				archive := ""
				if i == 0 {
					archive = filepath.Join(snaps, "0", "snapshot.tar.gz")
				}
				for _, items := range [][]string{nil, {fmt.Sprintf("d%d", rng.Intn(6))}, {"archive"}} {
					plans := make([]*RestoreResult, 2)
					errs := make([]string, 2)
					for j, sparse := range []bool{false, true} {
						opts := RestoreOptions{Manifest: m, DryRun: true, planWhole: !sparse, spillAt: 3}
						from := ""
						switch {
						case items == nil:
						case items[0] == "archive" && archive == "":
							continue
						case items[0] == "archive":
							opts.Manifest, from = nil, archive
						default:
							if opts.Paths, err = pathspec.Parse(items, pathspec.Options{}); err != nil {
								t.Fatal(err)
							}
						}
						plans[j], err = Restore(context.Background(), root, from, opts)
						errs[j] = fmt.Sprint(err)
					}
					if !reflect.DeepEqual(plans[0], plans[1]) || errs[0] != errs[1] {
						t.Fatalf("restore of %d, paths %q: over what differs\n%+v (%s)\nover the whole tree\n%+v (%s)", i, items, plans[1], errs[1], plans[0], errs[0])
					}
					if items == nil && errs[0] != "<nil>" {
						t.Fatalf("dry run of %d: %s", i, errs[0])
					}
				}
				opts := RestoreOptions{Manifest: m, planWhole: k%3 == 2, spillAt: 3}
				if archive != "" && k%2 == 1 {
					opts.Manifest = nil
				}
				res, err := Restore(context.Background(), root, archive, opts)
				if err != nil {
					t.Fatalf("restore of %d: %v", i, err)
				}
				renamed += res.Renamed
				// (A name in another normalisation form is the same name
				// there, and left as it is spelt.)
				got, _ := splitIgnored(state(t, root))
				if d := diffStates(nfcKeys(states[i]), nfcKeys(got)); d != "" {
					t.Fatalf("restore of %d differs:\n%s", i, d)
				}
			}
			if renamed == 0 {
				t.Fatal("no restore renamed anything")
			}
		})
	}
}

func nfcKeys(st map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range st {
		out[norm.NFC.String(k)] = v
	}
	return out
}

// respell gives a few entries under dir the other case of their name
// (files and folders), and the file named nfc its NFD spelling.
func respell(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	paths := editable(dir)
	for range 1 + len(paths)/15 {
		p := paths[rng.Intn(len(paths))]
		os.Rename(p, filepath.Join(filepath.Dir(p), swapCase(filepath.Base(p)))) // (gone already, perhaps: its folder respelt)
	}
	os.Rename(filepath.Join(dir, "d0", nfc), filepath.Join(dir, "d0", nfd))
}

// TestArchiveRespeltThroughASymlink: where the snapshot has a/x and the
// tree a symlink A to a folder that holds the same x, the file a/x opens
// is not the tree's a/x: a restore from the archive read beside the walk
// stages x, deletes the symlink and makes the folder, as one planned over
// the whole tree does, and the folder the symlink pointed to is left as
// it was.
func TestArchiveRespeltThroughASymlink(t *testing.T) {
	t.Parallel()
	root := foldingRoot(t)
	writeTree(t, root, map[string]string{"a/x": "same\n", "real/x": "same\n"})
	snap := create(t, root, filepath.Join(t.TempDir(), "s.tar.gz"))
	want := state(t, root)
	if err := os.RemoveAll(filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(root, "A")); err != nil {
		t.Fatal(err)
	}
	plans := make([]*RestoreResult, 2)
	for j, sparse := range []bool{false, true} {
		var err error
		if plans[j], err = Restore(context.Background(), root, snap.Archive, RestoreOptions{DryRun: true, planWhole: !sparse}); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(plans[0], plans[1]) || plans[1].Written != 1 || plans[1].Folders != 1 || plans[1].Deleted != 1 {
		t.Fatalf("over what differs %+v\nover the whole tree %+v\nwant a/ and a/x written, A deleted", plans[1], plans[0])
	}
	if _, err := Restore(context.Background(), root, snap.Archive, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, state(t, root)); d != "" {
		t.Fatalf("after the restore:\n%s", d)
	}
}

// TestDiffOnAFoldingFileSystemAsPlanned: on a file system that folds
// names, the diff hands its changes on through a queue that holds each
// only as long as its other spelling may come (respeltQueue); over random
// edits and entries respelt both ways (upper to lower case and back, a
// name out of ASCII), it says what a restore's plan says of the same
// tree (Diff from its archive, which pairs spellings over the whole tree, or over
// each block of its plan written out), in path order, and so does the
// diff between two snapshots of it.
func TestDiffOnAFoldingFileSystemAsPlanned(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewSource(seed))
			root, out := foldingRoot(t), t.TempDir()
			genTree(t, rng, root, 80)
			writeTree(t, root, map[string]string{"d1/" + nfc: "accent", "Écrit/Été.txt": "été", "d2/MiXeD.go": "x"})
			respell(t, rng, root)
			old := create(t, root, filepath.Join(out, "old.tar.gz"))
			for k := range 3 {
				mutate(t, rng, root)
				respell(t, rng, root)
				if k == 1 {
					os.Rename(filepath.Join(root, "Écrit"), filepath.Join(root, "écrit"))
				}
				want, err := Diff(context.Background(), DiffOptions{FromArchive: old.Archive, Root: root})
				if err != nil {
					t.Fatal(err)
				}
				// (so does its plan written out a few entries a block)
				spilled, err := Diff(context.Background(), DiffOptions{FromArchive: old.Archive, Root: root, Restore: RestoreOptions{spillAt: 1 + k}})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(spilled, want) {
					t.Fatalf("edit %d: the plan written out %d entries a block says\n%v\nwant (held)\n%v", k, 1+k, spilled, want)
				}
				got := diffNow(t, root, old.Manifest)
				// (A kind changed is told in the tree's kind by a diff, in
				// the snapshot's by a plan.)
				kindless := func(chs []Change) []Change {
					out := slices.Clone(chs)
					for i := range out {
						if out[i].Op == OpModified {
							out[i].Kind = ""
						}
					}
					return out
				}
				got, want = kindless(got), kindless(want)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("edit %d: diff\n%v\nwant (the restore's plan)\n%v", k, got, want)
				}
				renamed := 0
				for _, ch := range got {
					if ch.TreePath != "" {
						renamed++
					}
				}
				if k == 2 && renamed == 0 {
					t.Fatal("no change of spelling to pair")
				}
				cur := create(t, root, filepath.Join(out, fmt.Sprint(k, ".tar.gz")))
				between, err := Diff(context.Background(), DiffOptions{From: old.Manifest, To: cur.Manifest, Fold: ProbeFolding(root)})
				if err != nil {
					t.Fatal(err)
				}
				if between = kindless(between); !reflect.DeepEqual(between, want) {
					t.Fatalf("edit %d: diff between two snapshots\n%v\nwant\n%v", k, between, want)
				}
			}
		})
	}
}

// TestFolderReplacedBySpeltOtherHeldAndSpilled: where names fold, a
// snapshot may replace a tree's folder (Docs/) by a file spelt otherwise
// (docs). The path is the snapshot's all the same, whichever spelling
// looks it up: the plan held and the plan written out a few entries a
// block give the same result, changes and tree. A folder that cannot go
// (it holds the restore's own archive) is refused while planning, a dry
// run too, as where the file is spelt as the folder (*LeftAloneError),
// rather than kept as a folder the snapshot does not have: the tree is as
// it was.
func TestFolderReplacedBySpeltOtherHeldAndSpilled(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	src := t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "a", "docs": "now a file", "z/y": "y"})
	snap := create(t, src, filepath.Join(t.TempDir(), "s.tar.gz"))
	tree := map[string]string{"a.txt": "a", "Docs/a.txt": "1", "Docs/b.txt": "2", "Docs/Sub/c": "3", "z/y": "y"}
	staging := regexp.MustCompile(regexp.QuoteMeta(stagingPrefix) + `[0-9a-f]+`)
	for _, c := range []struct {
		name               string
		manifest, dry, own bool // own: the archive restored is inside Docs
		paths              []string
	}{
		{name: "manifest", manifest: true},
		{name: "archive"},
		{name: "dry run", manifest: true, dry: true},
		{name: "paths", manifest: true, paths: []string{":(icase)docs"}},
		{name: "paths outside", manifest: true, paths: []string{"docs"}},
		{name: "own archive", own: true},
		{name: "own archive, manifest", manifest: true, own: true},
		{name: "own archive, dry run", manifest: true, dry: true, own: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var outs []string
			var trees []map[string]string
			var results []*RestoreResult
			var errs []error
			var befores []map[string]string
			for _, at := range []int{1 << 30, 1, 2, 3} {
				root := foldingRoot(t)
				writeTree(t, root, tree)
				archive := snap.Archive
				if c.own {
					b, err := os.ReadFile(snap.Archive)
					if err != nil {
						t.Fatal(err)
					}
					archive = filepath.Join(root, "Docs", "Sub", "s.tar.gz")
					if err := os.WriteFile(archive, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				changes, err := Diff(context.Background(), DiffOptions{FromArchive: archive, Root: root, Restore: RestoreOptions{spillAt: at}})
				if err != nil {
					t.Fatal(err)
				}
				opts := RestoreOptions{spillAt: at, DryRun: c.dry}
				if c.manifest {
					opts.Manifest = snap.Manifest
				}
				if c.paths != nil {
					if opts.Paths, err = pathspec.Parse(c.paths, pathspec.Options{}); err != nil {
						t.Fatal(err)
					}
				}
				befores = append(befores, state(t, root))
				res, err := Restore(context.Background(), root, archive, opts)
				errs = append(errs, err)
				rj, _ := json.Marshal(res)
				cj, _ := json.Marshal(changes)
				outs = append(outs, staging.ReplaceAllString(fmt.Sprintf("%s (%v)\nchanges %s", rj, err, cj), "STAGING"))
				trees = append(trees, state(t, root))
				results = append(results, res)
			}
			for i := 1; i < len(outs); i++ {
				if outs[i] != outs[0] {
					t.Fatalf("held:\n%s\nspilled (%d):\n%s", outs[0], i, outs[i])
				}
				if d := diffStates(trees[0], trees[i]); d != "" {
					t.Fatalf("held and spilled (%d) leave the trees otherwise:\n%s", i, d)
				}
			}
			res, out := results[0], outs[0]
			if !strings.Contains(out, `{"type":"change","op":"modified","path":"docs","kind":"file","tree_path":"Docs"}`) {
				t.Errorf("changes, want docs modified (a kind change), not added:\n%s", out)
			}
			switch {
			case c.own:
				var la *LeftAloneError
				want := LeftAloneError{Folder: "Docs", Path: "Docs/Sub/s.tar.gz", Reason: "input"}
				if !errors.As(errs[0], &la) || *la != want || res != nil {
					t.Errorf("want the restore refused for Docs/Sub/s.tar.gz in Docs:\n%s", out)
				}
				if d := diffStates(befores[0], trees[0]); d != "" {
					t.Errorf("refused, yet the tree changed:\n%s", d)
				}
			case c.name == "paths outside":
				// (Docs/Sub, spelt as no path of the snapshot, is outside docs)
				if !strings.Contains(out, "holds Docs/Sub, outside the paths restored") {
					t.Errorf("want a refusal naming Docs/Sub:\n%s", out)
				}
			case !strings.Contains(out, `"deleted_paths":["Docs/"`):
				t.Errorf("want Docs/ deleted:\n%s", out)
			case c.dry:
				if d := diffStates(state(t, src), trees[0]); d == "" {
					t.Error("a dry run changed the tree")
				}
			default:
				if d := diffStates(state(t, src), trees[0]); d != "" {
					t.Errorf("the tree is not the snapshot's:\n%s", d)
				}
			}
		})
	}
}
