package gitdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFind: a repository's top and git directory are found from its top
// and from a folder below, through a ".git" file (a worktree, with the
// common folder its "commondir" names; a submodule, without one), and no
// repository is found outside one.
func TestFind(t *testing.T) {
	root := t.TempDir()
	mk := func(p, data string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if data != "" {
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("main/.git/info/", "")
	mk("main/a/b/", "")
	mk("main/.git/worktrees/wt/commondir", "../..\n")
	mk("wt/.git", "gitdir: "+filepath.Join(root, "main/.git/worktrees/wt")+"\n")
	mk("wt/sub/", "")
	mk("main/.git/modules/m/HEAD", "ref: refs/heads/main\n")
	mk("main/m/.git", "gitdir: ../.git/modules/m\n")
	mk("plain/x/", "")
	mk("bad/.git", "not a gitdir line\n")
	for _, tt := range []struct {
		dir, top, gitDir, common string
	}{
		{"main", "main", "main/.git", "main/.git"},
		{"main/a/b", "main", "main/.git", "main/.git"},
		{"wt/sub", "wt", "main/.git/worktrees/wt", "main/.git"},
		{"main/m", "main/m", "main/.git/modules/m", "main/.git/modules/m"},
		{"plain/x", "", "", ""},
		{"bad", "", "", ""},
	} {
		top, gitDir := Find(filepath.Join(root, tt.dir))
		abs := func(p string) string {
			if p == "" {
				return ""
			}
			return filepath.Join(root, p)
		}
		if top != abs(tt.top) || gitDir != abs(tt.gitDir) {
			t.Errorf("Find(%s) = %q, %q; want %q, %q", tt.dir, top, gitDir, abs(tt.top), abs(tt.gitDir))
		}
		if gitDir != "" {
			if c := Common(gitDir); c != abs(tt.common) {
				t.Errorf("Common(%s) = %q, want %q", tt.gitDir, c, abs(tt.common))
			}
		}
	}
}

// TestTarget: a ".git" file names a path as git reads it — "gitdir: " and
// the rest of its one line — and nothing else is one.
func TestTarget(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"gitdir: ../.git/modules/m\n", "../.git/modules/m", true},
		{"gitdir: /main/.git/worktrees/wt\r\n", "/main/.git/worktrees/wt", true},
		{"gitdir: C:/main/.git/worktrees/wt", "C:/main/.git/worktrees/wt", true},
		{"gitdir: with space \n", "with space ", true},
		{"gitdir: \n", "", false},
		{"gitdir:../x\n", "", false},
		{" gitdir: x\n", "", false},
		{"gitdir: x\ny\n", "", false},
		{"gitdir: x\x00y", "", false},
		{"[core]\n", "", false},
		{"", "", false},
	} {
		if got, ok := Target([]byte(tt.in)); got != tt.want || ok != tt.ok {
			t.Errorf("Target(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
