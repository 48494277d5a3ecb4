package snap

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rewind.dev/snap/pathspec"
)

// TestReplacedFolderLookedAtAsTheWalkGoes: a folder of the tree that the
// snapshot replaces by a file, holding hundreds of entries, is looked at
// as the walk goes through it (replaceCheck), so a plan written out in
// blocks cuts inside it; restored from the archive and from the manifest,
// planned whole, over what differs, and in blocks of a few entries, the
// results and refusals are the same: the folder replaced; refused when it
// holds ignored files (the first three named, in walk order) or, in a
// restore limited to paths, a path outside them; the tree untouched then.
func TestReplacedFolderLookedAtAsTheWalkGoes(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	tmp := t.TempDir()
	src := t.TempDir()
	writeTree(t, src, map[string]string{".gitignore": "*.log\n", "big": "now a file", "keep.txt": "k", "zz/after.txt": "z"})
	snap := create(t, src, filepath.Join(t.TempDir(), "snap.tar.gz"))
	tree := func(ignored ...string) string {
		dir := t.TempDir()
		files := map[string]string{".gitignore": "*.log\n", "keep.txt": "k", "zz/after.txt": "z"}
		for i := range 40 {
			for j := range 5 {
				files[fmt.Sprintf("big/d%02d/f%d.txt", i, j)] = "x"
			}
			files[fmt.Sprintf("big/d%02d/deep/g.txt", i)] = "y"
		}
		for _, name := range ignored {
			files[name] = "precious"
		}
		writeTree(t, dir, files)
		return dir
	}
	restore := func(dir string, manifest bool, paths []string, opts RestoreOptions) (string, int) {
		archive := snap.Archive
		if manifest {
			opts.Manifest, archive = snap.Manifest, ""
		}
		if paths != nil {
			ps, err := pathspec.Parse(paths, pathspec.Options{})
			if err != nil {
				t.Fatal(err)
			}
			opts.Paths = ps
		}
		most := 0
		if p, err := plan(context.Background(), dir, archive, opts.Manifest, opts, false); err == nil {
			if p.spill != nil {
				most = p.spill.most
			}
			p.close()
		}
		res, err := Restore(context.Background(), dir, archive, opts)
		if err != nil {
			var sel *SelectionError
			if errors.As(err, &sel) {
				return fmt.Sprintf("selection: %s holds %s", sel.Path, sel.Outside), most
			}
			return strings.ReplaceAll(err.Error(), dir, "TREE"), most
		}
		return fmt.Sprintf("written %d deleted %d folders %d", res.Written, res.Deleted, res.Folders), most
	}
	for _, tc := range []struct {
		name    string
		ignored []string
		paths   []string
		want    string
	}{
		{"replaced", nil, nil, "written 1 deleted 240 folders 81"},
		{"ignored files in it", []string{"big/d31/deep/h.log", "big/d07/x.log", "big/a.log", "big/d07/deep/y.log"}, nil,
			"cannot restore big as a file: the folder there holds ignored files (big/a.log, big/d07/deep/y.log, big/d07/x.log); move them away and retry"},
		{"an ignored file last in it", []string{"big/zz.log"}, nil,
			"cannot restore big as a file: the folder there holds ignored files (big/zz.log); move them away and retry"},
		{"paths", nil, []string{"big", "keep.txt"}, "written 1 deleted 240 folders 81"},
		{"a path outside", nil, []string{"big", ":!big/d23/f3.txt"}, "selection: big holds big/d23/f3.txt"},
	} {
		for _, manifest := range []bool{false, true} {
			var want string
			for _, how := range []struct {
				sparse bool
				at     int
			}{{false, 1 << 30}, {true, 1 << 30}, {true, 4}} {
				if !how.sparse && manifest {
					continue // (a manifest Rewind writes is planned over what differs)
				}
				dir := tree(tc.ignored...)
				before := state(t, dir)
				got, most := restore(dir, manifest, tc.paths, RestoreOptions{planWhole: !how.sparse, spillAt: how.at, tempDir: tmp})
				if want == "" {
					want = got
				}
				if got != tc.want || got != want {
					t.Fatalf("%s, manifest %v, over what differs %v, blocks of %d: %s, want %s", tc.name, manifest, how.sparse, how.at, got, tc.want)
				}
				if how.at == 4 && strings.HasPrefix(got, "written") && (most == 0 || most > 16) {
					t.Fatalf("%s, manifest %v: blocks of up to %d entries, want a few", tc.name, manifest, most)
				}
				if strings.HasPrefix(got, "written") {
					if b, err := os.ReadFile(filepath.Join(dir, "big")); err != nil || string(b) != "now a file" {
						t.Fatalf("%s: big is %q (%v), want the snapshot's file", tc.name, b, err)
					}
				} else if d := diffStates(before, state(t, dir)); d != "" {
					t.Fatalf("%s: refused, yet the tree changed:\n%s", tc.name, d)
				}
			}
		}
	}
}

// TestReplacedFolderHoldingALeftAlonePath: a folder of the tree that the
// snapshot replaces by a file or symlink, holding a path the restore leaves
// alone (its own archive, at any depth; a manifest's archive; a file
// ignored under the snapshot's rules), could not go: the restore is refused
// while planning (*LeftAloneError), not stopped half way, whether the plan
// is made whole, over what differs, or written out a few entries a block,
// and a dry run reports the same; the tree is as it was, byte for byte. A
// folder the snapshot does not have, holding the archive, is kept instead.
func TestReplacedFolderHoldingALeftAlonePath(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for _, tc := range []struct {
		name     string
		snap     map[string]string // the snapshot's tree (with Docs, a file, unless link)
		link     bool              // the snapshot has Docs as a symlink
		tree     map[string]string
		own      string // where the archive restored is, in the tree ("": outside it)
		manifest bool   // restored from the manifest
		want     *LeftAloneError
	}{
		{name: "archive", own: "Docs/s.tar.gz",
			want: &LeftAloneError{Folder: "Docs", Path: "Docs/s.tar.gz", Reason: "input"}},
		{name: "archive deeper", own: "Docs/Sub/Deep/s.tar.gz",
			want: &LeftAloneError{Folder: "Docs", Path: "Docs/Sub/Deep/s.tar.gz", Reason: "input"}},
		{name: "manifest's archive", own: "Docs/Sub/s.tar.gz", manifest: true,
			want: &LeftAloneError{Folder: "Docs", Path: "Docs/Sub/s.tar.gz", Reason: "input"}},
		{name: "symlink", own: "Docs/Sub/s.tar.gz", link: true,
			want: &LeftAloneError{Folder: "Docs", Path: "Docs/Sub/s.tar.gz", Reason: "input"}},
		{name: "symlink, manifest", own: "Docs/Sub/s.tar.gz", link: true, manifest: true,
			want: &LeftAloneError{Folder: "Docs", Path: "Docs/Sub/s.tar.gz", Reason: "input"}},
		{name: "ignored under the snapshot's rules",
			snap: map[string]string{".gitignore": "*.log\n", "Docs": "now a file", "a.txt": "a"},
			tree: map[string]string{".gitignore": "", "Docs/a.txt": "1", "Docs/Sub/x.log": "precious", "a.txt": "a"},
			want: &LeftAloneError{Folder: "Docs", Path: "Docs/Sub/x.log", Reason: "ignored"}},
		{name: "ignored under the snapshot's rules, manifest", manifest: true,
			snap: map[string]string{".gitignore": "*.log\n", "Docs": "now a file", "a.txt": "a"},
			tree: map[string]string{".gitignore": "", "Docs/a.txt": "1", "Docs/Sub/x.log": "precious", "a.txt": "a"},
			want: &LeftAloneError{Folder: "Docs", Path: "Docs/Sub/x.log", Reason: "ignored"}},
		{name: "a folder the snapshot does not have", own: "Gone/Sub/s.tar.gz",
			snap: map[string]string{"a.txt": "a", "z/y": "y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := t.TempDir()
			files := tc.snap
			if files == nil {
				files = map[string]string{"a.txt": "a", "z/y": "y"}
				if !tc.link {
					files["Docs"] = "now a file"
				}
			}
			writeTree(t, src, files)
			if tc.link {
				if err := os.Symlink("a.txt", filepath.Join(src, "Docs")); err != nil {
					t.Fatal(err)
				}
			}
			tree := tc.tree
			if tree == nil {
				tree = map[string]string{"a.txt": "A", "Docs/a.txt": "1", "Docs/Sub/c": "3", "Gone/g": "g", "z/y": "y"}
			}
			var first string
			for _, how := range []struct {
				whole, dry bool
				at         int
			}{{false, false, 1 << 30}, {true, false, 1 << 30}, {false, false, 1}, {false, false, 2}, {false, false, 3}, {false, true, 1 << 30}, {false, true, 2}} {
				if how.whole && tc.manifest {
					continue // (a manifest Rewind writes is planned over what differs)
				}
				if how.dry && tc.manifest && tc.want != nil && tc.want.Reason == "ignored" {
					// A dry run from a manifest fetches no ignore file: the
					// snapshot's rules it does not have are not applied.
					continue
				}
				root := t.TempDir()
				writeTree(t, root, tree)
				out := filepath.Join(t.TempDir(), "s.tar.gz")
				if tc.own != "" {
					out = filepath.Join(root, filepath.FromSlash(tc.own))
					if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				snap := create(t, src, out)
				opts := RestoreOptions{DryRun: how.dry, planWhole: how.whole, spillAt: how.at}
				archive := snap.Archive
				if tc.manifest {
					opts.Manifest, archive = snap.Manifest, ""
				}
				before := state(t, root)
				res, err := Restore(context.Background(), root, archive, opts)
				at := fmt.Sprintf("whole %v, dry run %v, blocks of %d", how.whole, how.dry, how.at)
				if tc.want == nil {
					if err != nil {
						t.Fatalf("%s: %v", at, err)
					}
					if !how.dry && !slices.Contains(res.Kept, "Gone") {
						t.Fatalf("%s: kept folders %v, want Gone", at, res.Kept)
					}
					continue
				}
				checkRefusedAlike(t, at, err, *tc.want, "move it out of Docs", &first, before, root)
			}
		})
	}
}

// TestInputWhereTheSnapshotHasAFolder: the snapshot's own archive, in the
// tree at a path where the snapshot has a folder, cannot give way (a
// restore never deletes what it reads), so the restore is refused while
// planning, the same way held, spilled, whole or dry, and the tree is left
// as it was. Where the snapshot has a symlink or a file, the archive is
// kept (kept_inputs), as a file is.
func TestInputWhereTheSnapshotHasAFolder(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for _, tc := range []struct {
		name     string
		link     bool // the snapshot has Docs as a symlink, not a folder
		manifest bool // restored from the manifest
	}{
		{name: "folder"},
		{name: "folder, manifest", manifest: true},
		{name: "symlink", link: true},
		{name: "symlink, manifest", link: true, manifest: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := t.TempDir()
			files := map[string]string{"a.txt": "a", "z/y": "y"}
			if !tc.link {
				files["Docs/in"] = "inside"
			}
			writeTree(t, src, files)
			if tc.link {
				if err := os.Symlink("a.txt", filepath.Join(src, "Docs")); err != nil {
					t.Fatal(err)
				}
			}
			want := LeftAloneError{Path: "Docs", Reason: "input"}
			var first string
			for _, how := range []struct {
				whole, dry bool
				at         int
			}{{false, false, 1 << 30}, {true, false, 1 << 30}, {false, false, 1}, {false, false, 2}, {false, true, 1 << 30}, {false, true, 1}} {
				if how.whole && tc.manifest {
					continue // (a manifest Rewind writes is planned over what differs)
				}
				root := t.TempDir()
				writeTree(t, root, map[string]string{"a.txt": "A", "z/y": "y"})
				snap := create(t, src, filepath.Join(root, "Docs"))
				opts := RestoreOptions{DryRun: how.dry, planWhole: how.whole, spillAt: how.at}
				archive := snap.Archive
				if tc.manifest {
					opts.Manifest, archive = snap.Manifest, ""
				}
				before := state(t, root)
				res, err := Restore(context.Background(), root, archive, opts)
				at := fmt.Sprintf("whole %v, dry run %v, blocks of %d", how.whole, how.dry, how.at)
				if tc.link {
					if err != nil {
						t.Fatalf("%s: %v", at, err)
					}
					if !slices.Contains(res.Inputs, "Docs") {
						t.Fatalf("%s: kept inputs %v, want Docs", at, res.Inputs)
					}
					continue
				}
				checkRefusedAlike(t, at, err, want, "move it out of the tree", &first, before, root)
			}
		})
	}
}

// TestInputWhereAnArchiveImpliesAFolder: an archive that does not list a
// folder still implies it (Docs of Docs/in); where the tree has the
// archive itself at that path, the restore is refused as where the folder
// is listed.
func TestInputWhereAnArchiveImpliesAFolder(t *testing.T) {
	t.Parallel()
	for _, how := range []struct {
		dry bool
		at  int
	}{{false, 1 << 30}, {false, 1}, {true, 1 << 30}} {
		root := t.TempDir()
		writeTree(t, root, map[string]string{"a.txt": "A"})
		archive := filepath.Join(root, "Docs")
		body := craft(t, []tarEntry{{name: "a.txt", typ: tar.TypeReg, body: "a"}, {name: "Docs/in", typ: tar.TypeReg, body: "inside"}})
		if err := os.WriteFile(archive, body, 0o644); err != nil {
			t.Fatal(err)
		}
		before := state(t, root)
		_, err := Restore(context.Background(), root, archive, RestoreOptions{DryRun: how.dry, spillAt: how.at})
		var la *LeftAloneError
		if !errors.As(err, &la) || *la != (LeftAloneError{Path: "Docs", Reason: "input"}) {
			t.Fatalf("dry run %v, blocks of %d: %v, want the archive named as in the way", how.dry, how.at, err)
		}
		if d := diffStates(before, state(t, root)); d != "" {
			t.Fatalf("dry run %v: refused, yet the tree changed:\n%s", how.dry, d)
		}
	}
}

// checkRefusedAlike checks that err is the refusal want, says what to do
// (todo), is the same error as the first way's (first, set by the first
// call), and left the tree at root as it was (before).
func checkRefusedAlike(t *testing.T, at string, err error, want LeftAloneError, todo string, first *string, before map[string]string, root string) {
	t.Helper()
	var la *LeftAloneError
	if !errors.As(err, &la) || *la != want {
		t.Fatalf("%s: %v (%#v), want %#v", at, err, la, want)
	}
	if msg := err.Error(); !strings.Contains(msg, todo) {
		t.Fatalf("%s: %q, want it to say what to do", at, msg)
	}
	if *first == "" {
		*first = err.Error()
	} else if err.Error() != *first {
		t.Fatalf("%s: %v, want the same error as the first: %s", at, err, *first)
	}
	if d := diffStates(before, state(t, root)); d != "" {
		t.Fatalf("%s: refused, yet the tree changed:\n%s", at, d)
	}
}
