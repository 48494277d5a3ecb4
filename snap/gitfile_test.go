package snap

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// restoreWays are the ways a restore reads a snapshot and plans: the
// archive or the manifest, over what differs or over the whole tree, and
// a plan written out in blocks (see spill.go).
var restoreWays = []struct {
	name             string
	manifest, sparse bool
	spill            int
}{
	{"archive", false, true, 0},
	{"archive, whole tree", false, false, 0},
	{"manifest", true, true, 0},
	{"manifest, whole tree", true, false, 0},
	{"manifest, spilled", true, true, 4},
}

// wayOpts are the options of a restore over what differs (sparse) or
// over the whole tree, with its plan written out spill entries a block (0:
// as in production).
func wayOpts(sparse bool, spill int) RestoreOptions {
	return RestoreOptions{planWhole: !sparse, spillAt: spill}
}

// restoreWay restores snap over root from its manifest or its archive,
// with opts (see wayOpts).
func restoreWay(root string, snap *Result, manifest, dry bool, opts RestoreOptions) (*RestoreResult, error) {
	opts.DryRun = dry
	archive := snap.Archive
	if manifest {
		opts.Manifest, archive = snap.Manifest, ""
	}
	return Restore(context.Background(), root, archive, opts)
}

// gitListing is what git lists as not ignored in dir's repository (ls-files
// -co --exclude-standard) and, in each repository nested in it (a
// submodule, a linked worktree, a repository of its own), what git lists
// there, with the .git file that makes it one, where it is a file: git
// lists no .git, and a snapshot holds those.
func gitListing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, f := range gitFiles(t, dir) {
		sub := strings.TrimSuffix(f, "/")
		if sub == "." {
			continue // (an empty folder where a submodule is not checked out)
		}
		if fi, err := os.Lstat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			out = append(out, f)
			continue
		}
		for _, g := range gitListing(t, filepath.Join(dir, sub)) {
			out = append(out, sub+"/"+g)
		}
		if fi, err := os.Lstat(filepath.Join(dir, sub, ".git")); err == nil && fi.Mode().IsRegular() {
			out = append(out, sub+"/.git")
		}
	}
	slices.Sort(out)
	return out
}

// gitProject makes, in dir, a repository p with a submodule at sub (a
// repository lib beside it) and a linked worktree at wt, and returns p.
func gitProject(t *testing.T, dir string) string {
	t.Helper()
	lib, p := filepath.Join(dir, "lib"), filepath.Join(dir, "p")
	for repo, files := range map[string]map[string]string{
		lib: {"lib.go": "package lib\n"},
		p:   {"main.go": "package main\n", ".gitignore": "*.log\n"},
	} {
		os.MkdirAll(repo, 0o755)
		git(t, repo, "init", "-q")
		writeTree(t, repo, files)
		git(t, repo, "add", "-A")
		git(t, repo, "commit", "-qm", "first")
	}
	git(t, p, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub")
	git(t, p, "commit", "-qm", "sub")
	git(t, p, "worktree", "add", "-q", "wt")
	return p
}

// TestWalkHoldsGitFiles: a snapshot holds a submodule's and a linked
// worktree's .git files, beside what git lists, and a root's own when the
// root is a linked worktree; not a .git file of another form, a larger
// one, one naming a folder of the tree outside a .git folder, nor anything
// of a .git folder.
func TestWalkHoldsGitFiles(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	p := gitProject(t, dir)
	writeTree(t, p, map[string]string{
		"odd/.git":     "not a gitdir line\n",
		"big/.git":     "gitdir: ../.git/modules/sub\n" + strings.Repeat("#", gitFileMax),
		"into/.git":    "gitdir: ../payload\n",
		"payload/HEAD": "ref: refs/heads/main\n",
		"sub/x.log":    "", // (sub's own rules: lib has none)
		"wt/y.log":     "",
	})
	got, want := walkFiles(t, p), gitListing(t, p)
	for _, f := range []string{"sub/.git", "wt/.git"} {
		if !slices.Contains(got, f) {
			t.Errorf("the walk has no %s", f)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("walk differs from git's listing with the .git files\n got: %q\nwant: %q", got, want)
	}

	wt2 := filepath.Join(dir, "wt2")
	git(t, p, "worktree", "add", "-q", wt2)
	want = append(gitListing(t, wt2), ".git")
	slices.Sort(want)
	if got := walkFiles(t, wt2); !slices.Equal(got, want) {
		t.Errorf("a root that is a linked worktree: got %q, want %q", got, want)
	}
}

// TestRestoreBringsBackGitFiles: after rm -rf of a submodule and of a
// linked worktree in the project, and of a root's own .git file (a root
// that is a linked worktree), a restore brings the .git files back with
// the rest: git run in each acts on its own repository, not on the one
// around it, and finds nothing changed.
func TestRestoreBringsBackGitFiles(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for _, w := range restoreWays {
		t.Run(w.name, func(t *testing.T) {
			dir, out := t.TempDir(), t.TempDir()
			p := gitProject(t, dir)
			wt2 := filepath.Join(dir, "wt2")
			git(t, p, "worktree", "add", "-q", wt2)
			for root, gone := range map[string][]string{p: {"sub", "wt"}, wt2: {".git"}} {
				snap := create(t, root, filepath.Join(out, filepath.Base(root)+".tar.gz"))
				want := state(t, root)
				for _, g := range gone {
					os.RemoveAll(filepath.Join(root, g))
				}
				if _, err := restoreWay(root, snap, w.manifest, false, wayOpts(w.sparse, w.spill)); err != nil {
					t.Fatalf("restore of %s: %v", root, err)
				}
				if d := diffStates(state(t, root), want); d != "" {
					t.Fatalf("after the restore, %s differs from the snapshot:\n%s", root, d)
				}
			}
			for _, repo := range []string{filepath.Join(p, "sub"), filepath.Join(p, "wt"), wt2} {
				top := strings.TrimSpace(git(t, repo, "rev-parse", "--show-toplevel"))
				if want, _ := filepath.EvalSymlinks(repo); top != want {
					t.Errorf("git in %s acts on %s", repo, top)
				}
				if st := git(t, repo, "status", "--porcelain"); st != "" {
					t.Errorf("git status in %s:\n%s", repo, st)
				}
			}
		})
	}
}

// TestRestoreNeverReplacesGitFolder: where the snapshot has a .git file
// and the tree a .git folder (the submodule cloned again by hand), the
// restore is refused, naming it, and nothing changes.
func TestRestoreNeverReplacesGitFolder(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir, out := t.TempDir(), t.TempDir()
	p := gitProject(t, dir)
	snap := create(t, p, filepath.Join(out, "s.tar.gz"))
	os.RemoveAll(filepath.Join(p, "sub"))
	git(t, p, "clone", "-q", filepath.Join(dir, "lib"), "sub")
	before := state(t, p)
	for _, manifest := range []bool{false, true} {
		_, err := restoreWay(p, snap, manifest, false, RestoreOptions{})
		if err == nil || !strings.Contains(err.Error(), "cannot restore sub/.git: sub/.git is a repository's .git folder") {
			t.Fatalf("err = %v, want a refusal naming sub/.git", err)
		}
		if d := diffStates(state(t, p), before); d != "" {
			t.Fatalf("a refused restore changed the tree:\n%s", d)
		}
	}
}

// TestRestoreSparesGitFilesOlderSnapshotsLack: a snapshot taken before
// .git files were held (its rules say so), or an archive read without its
// rules, leaves the tree's .git files alone rather than delete them; one
// that holds them deletes one it does not have, as any file.
func TestRestoreSparesGitFilesOlderSnapshotsLack(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	root, out := t.TempDir(), t.TempDir()
	writeTree(t, root, map[string]string{"a": "a", "sub/b": "b"})
	snap := create(t, root, filepath.Join(out, "s.tar.gz"))
	for _, tt := range []struct {
		name             string
		manifest, marked bool
		kept             bool
	}{
		{"an older snapshot", true, false, true},
		{"an archive alone", false, false, true},
		{"a snapshot holding them", true, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			writeTree(t, root, map[string]string{"sub/.git": "gitdir: ../../elsewhere/.git/modules/sub\n"})
			snap.Manifest.Header.Rules.GitFiles = tt.marked
			res, err := restoreWay(root, snap, tt.manifest, false, RestoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = os.Lstat(filepath.Join(root, "sub", ".git"))
			if kept := err == nil; kept != tt.kept || kept != slices.Contains(res.LeftIgnored, "sub/.git") {
				t.Fatalf("sub/.git kept: %v (spared %q), want %v", kept, res.LeftIgnored, tt.kept)
			}
		})
	}
}

// TestHostileGitEntries: an archive may hold a .git file, and nothing
// else of git's: an entry inside a .git folder at any depth, a .git folder
// or symlink, a .git file too large or naming a folder of the tree outside
// a .git folder are refused before anything is written, read whole, over
// a tree or into an empty folder.
func TestHostileGitEntries(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	reg := byte(tar.TypeReg)
	for _, tt := range []struct {
		name    string
		entries []tarEntry
		want    string
	}{
		{"into a nested .git", []tarEntry{{name: "sub/", typ: tar.TypeDir}, {name: "sub/.git/config", typ: reg}}, "never restores"},
		{"a .git folder", []tarEntry{{name: "sub/", typ: tar.TypeDir}, {name: "sub/.git/", typ: tar.TypeDir}}, "a .git dir"},
		{"a .git symlink", []tarEntry{{name: "sub/", typ: tar.TypeDir}, {name: "sub/.git", typ: tar.TypeSymlink, link: "../evil"}}, "a .git symlink"},
		{"a large .git file", []tarEntry{{name: ".git", typ: reg, body: "gitdir: /x/.git\n" + strings.Repeat("#", gitFileMax)}}, "a .git file of"},
		{"a .git file into the tree", []tarEntry{
			{name: "payload/", typ: tar.TypeDir}, {name: "payload/config", typ: reg, body: "[core]\n\tfsmonitor = evil\n"},
			{name: "sub/", typ: tar.TypeDir}, {name: "sub/.git", typ: reg, body: "gitdir: ../payload\n"},
		}, "names no repository outside the tree"},
		{"a .git file into the tree, dotted", []tarEntry{{name: ".git", typ: reg, body: "gitdir: .git/../payload\n"}}, "names no repository outside the tree"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			archive := filepath.Join(t.TempDir(), "bad.tar.gz")
			os.WriteFile(archive, craft(t, tt.entries), 0o644)
			for _, over := range []bool{true, false} {
				dir := t.TempDir()
				if over {
					writeTree(t, dir, map[string]string{"keep.txt": "keep"})
				}
				before := state(t, dir)
				_, err := Restore(context.Background(), dir, archive, RestoreOptions{})
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("over a tree %v: err = %v, want it to mention %q", over, err, tt.want)
				}
				if d := diffStates(before, state(t, dir)); d != "" {
					t.Fatalf("refused restore changed the tree:\n%s", d)
				}
			}
		})
	}
	// A .git file of git's form naming a repository elsewhere is restored.
	archive := filepath.Join(t.TempDir(), "ok.tar.gz")
	body := "gitdir: ../.git/modules/sub\n"
	os.WriteFile(archive, craft(t, []tarEntry{{name: "sub/", typ: tar.TypeDir}, {name: "sub/.git", typ: reg, body: body}}), 0o644)
	dir := t.TempDir()
	if _, err := Restore(context.Background(), dir, archive, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "sub", ".git")); string(b) != body {
		t.Fatalf("sub/.git = %q (%v), want %q", b, err, body)
	}
}
