package snap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
