package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/internal/layout"
)

// TestStoreOutOfGitWhateverTheOrder: the store is out of git after the next
// save, whatever came first — a store made in a plain folder that becomes a
// repository (at its top, or above it: a project in a subfolder, whose
// name holds a wildcard), a linked worktree whose shared exclude file lost
// the entry — and a save outside a repository makes none. git status and
// git add -A see nothing of the store, and the entry is written once.
func TestStoreOutOfGitWhateverTheOrder(t *testing.T) {
	t.Parallel()
	git := func(t *testing.T, dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v %s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, tt := range []struct {
		name string
		// setup makes the project (returned, with its work tree's top) and
		// its store, and the repository whose exclude file lacks the store
		// when the save comes.
		setup func(t *testing.T, h Homes, root string) (project, top string)
		entry string // the line the exclude file gets
	}{
		{"git init after rewind init", func(t *testing.T, h Homes, root string) (string, string) {
			initStore(t, h, root)
			git(t, root, "init", "-q")
			return root, root
		}, "/.agent/rewind/"},
		{"git init above the project after rewind init", func(t *testing.T, h Homes, root string) (string, string) {
			p := filepath.Join(root, "sub[1]", "proj")
			os.MkdirAll(p, 0o755)
			initStore(t, h, p)
			git(t, root, "init", "-q")
			return p, root
		}, `/sub\[1]/proj/.agent/rewind/`},
		{"linked worktree", func(t *testing.T, h Homes, root string) (string, string) {
			main := filepath.Join(root, "main")
			os.MkdirAll(main, 0o755)
			git(t, main, "init", "-q")
			write(t, main, "a.txt", "a")
			git(t, main, "add", "a.txt")
			git(t, main, "commit", "-qm", "a")
			wt := filepath.Join(root, "wt")
			git(t, main, "worktree", "add", "-q", wt)
			initStore(t, h, wt)
			exclude := filepath.Join(main, ".git", "info", "exclude")
			if !strings.Contains(read(t, exclude), "\n/.agent/rewind/\n") {
				t.Fatalf("init left the store out of the shared exclude file:\n%s", read(t, exclude))
			}
			os.WriteFile(exclude, nil, 0o644) // (as an older Rewind, or a failed init, left it)
			return wt, wt
		}, "/.agent/rewind/"},
		{"no repository", func(t *testing.T, h Homes, root string) (string, string) {
			initStore(t, h, root)
			return root, ""
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := testHomes(t)
			root := t.TempDir()
			project, top := tt.setup(t, h, root)
			write(t, project, "main.go", "package main\n")
			s, err := h.Open(project)
			if err != nil {
				t.Fatal(err)
			}
			save(t, s, SaveOptions{})
			save(t, s, SaveOptions{}) // (the entry is not written twice)
			if top == "" {
				if fileExists(filepath.Join(root, ".git")) {
					t.Error("a save outside a repository made one")
				}
				return
			}
			common := strings.TrimSpace(git(t, top, "rev-parse", "--path-format=absolute", "--git-common-dir"))
			ex := read(t, filepath.Join(common, "info", "exclude"))
			if n := strings.Count(ex, "\n"+tt.entry+"\n"); n != 1 {
				t.Errorf("info/exclude has %q %d times:\n%s", tt.entry, n, ex)
			}
			status := git(t, top, "status", "--porcelain", "--ignored", "--untracked-files=all")
			for _, l := range strings.Split(status, "\n") {
				if strings.Contains(l, ".agent") && !strings.HasPrefix(l, "!! ") {
					t.Errorf("git status sees the store: %q", l)
				}
			}
			if !strings.Contains(status, ".agent/") {
				t.Errorf("git status --ignored lists no store:\n%s", status)
			}
			if added := git(t, top, "add", "-A", "--dry-run"); strings.Contains(added, ".agent") {
				t.Errorf("git add -A would stage the store:\n%s", added)
			}
		})
	}
}

// initStore makes a project-mode store in dir, in the homes h.
func initStore(t *testing.T, h Homes, dir string) {
	t.Helper()
	if _, _, err := h.Init(dir, layout.ModeProject); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkExcludeFromGit is what each save spends keeping the store out
// of git when it is already: a stat per folder up to the repository's top,
// and two small reads.
func BenchmarkExcludeFromGit(b *testing.B) {
	dir := b.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	if err := excludeFromGit(dir); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := excludeFromGit(dir); err != nil {
			b.Fatal(err)
		}
	}
}
