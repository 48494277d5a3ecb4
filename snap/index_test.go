package snap

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestTrackedFilesInEveryIndexFormat: a tracked file that an ignore pattern
// matches stays in scope whatever form the git index takes — SHA-256 object
// names, a split index (core.splitIndex), a sparse one — read directly or by
// asking git; never silently dropped.
func TestTrackedFilesInEveryIndexFormat(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for _, tc := range []struct {
		name  string
		init  []string
		setup func(t *testing.T, dir string)
	}{
		{name: "SHA-1", init: []string{"init", "-q"}},
		{name: "SHA-256", init: []string{"init", "-q", "--object-format=sha256"}},
		{name: "split index", init: []string{"init", "-q"}, setup: func(t *testing.T, dir string) {
			git(t, dir, "config", "core.splitIndex", "true")
		}},
		{name: "index version 4", init: []string{"init", "-q"}, setup: func(t *testing.T, dir string) {
			git(t, dir, "config", "index.version", "4")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, tc.init...)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			writeTree(t, dir, map[string]string{".gitignore": "*.log\nbuild/\n", "y.log": "tracked", "z.log": "not tracked",
				"a.go": "a", "build/keep.txt": "tracked", "build/drop.txt": "not tracked", "sub/w.log": "tracked"})
			git(t, dir, "add", ".gitignore", "a.go")
			git(t, dir, "add", "-f", "y.log", "build/keep.txt", "sub/w.log")
			if tc.name == "split index" {
				if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
					t.Fatal(err)
				}
				matches, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
				if len(matches) == 0 {
					t.Fatal("git wrote no shared index: the case tests nothing")
				}
			}
			want := gitFiles(t, dir)
			if got := walkFiles(t, dir); !slices.Equal(got, want) {
				t.Errorf("walk differs from git\n got: %q\nwant: %q", got, want)
			}
			// A root below the repository's top reads the same index.
			sub := filepath.Join(dir, "sub")
			if got := walkFiles(t, sub); !slices.Equal(got, []string{"w.log"}) {
				t.Errorf("walk of sub/ = %q, want the tracked w.log", got)
			}
		})
	}
}

// TestUnknownIndexWithoutGitFails: an index the reader does not know, with
// no git to ask, fails the walk with an error that says so — never a walk
// that silently drops tracked files.
func TestUnknownIndexWithoutGitFails(t *testing.T) {
	gitEnv(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "config", "core.splitIndex", "true")
	writeTree(t, dir, map[string]string{".gitignore": "*.log\n", "y.log": "tracked"})
	git(t, dir, "add", "-f", "y.log")
	gitPath, _ := exec.LookPath("git")
	t.Setenv("PATH", t.TempDir()) // no git
	_, err := Walk(t.Context(), dir, WalkOptions{})
	if err == nil {
		t.Fatalf("walk without git of a split index succeeded (git is at %s)", gitPath)
	}
	t.Log(err)
}
