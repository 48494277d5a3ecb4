package snap

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitFilesDeep is what git lists in dir's repository and, inside every
// nested repository it meets (listed as "sub/"), what git lists there.
func gitFilesDeep(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, f := range gitFiles(t, dir) {
		if sub, ok := strings.CutSuffix(f, "/"); ok {
			for _, g := range gitFilesDeep(t, filepath.Join(dir, sub)) {
				out = append(out, sub+"/"+g)
			}
			continue
		}
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// TestWalkUsesEverySourceGitUses compares the walk with git where the rules
// come from outside the tree or from a nested repository: its own
// info/exclude, its own core.excludesFile, the outer .gitignore files that
// do not reach into it, its tracked files; and a symlinked .gitignore, which
// git does not follow.
func TestWalkUsesEverySourceGitUses(t *testing.T) {
	home := gitHome(t)
	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, dir string)
	}{
		{name: "symlinked .gitignore is not followed", files: map[string]string{
			"rules": "*.log\n", "a.log": "", "b.txt": "", "sub/c.log": "", "sub/rules": "*.txt\n", "sub/d.txt": "",
		}, setup: func(t *testing.T, dir string) {
			os.Symlink("rules", filepath.Join(dir, ".gitignore"))
			os.Symlink("rules", filepath.Join(dir, "sub", ".gitignore"))
		}},
		{name: "nested repository: its own info/exclude", files: map[string]string{
			"top.txt": "", "nested/a.tmp": "", "nested/b.txt": "", "nested/deep/c.tmp": "",
		}, setup: func(t *testing.T, dir string) {
			git(t, filepath.Join(dir, "nested"), "init", "-q")
			os.WriteFile(filepath.Join(dir, "nested/.git/info/exclude"), []byte("*.tmp\n"), 0o644)
		}},
		{name: "nested repository: the outer rules do not reach into it", files: map[string]string{
			".gitignore": "*.gen\nlib/\n", "a.gen": "", "nested/b.gen": "", "nested/lib/x.go": "", "nested/keep.go": "",
		}, setup: func(t *testing.T, dir string) {
			git(t, filepath.Join(dir, "nested"), "init", "-q")
			os.WriteFile(filepath.Join(dir, ".git/info/exclude"), []byte("*.key\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "nested/secret.key"), nil, 0o644)
		}},
		{name: "nested repository: its own core.excludesFile", files: map[string]string{
			"x.bak": "", "nested/y.bak": "", "nested/z.old": "", "nested/w.go": "",
		}, setup: func(t *testing.T, dir string) {
			git(t, filepath.Join(dir, "nested"), "init", "-q")
			os.WriteFile(filepath.Join(home, "nested-ignore"), []byte("*.old\n"), 0o644)
			git(t, filepath.Join(dir, "nested"), "config", "core.excludesFile", filepath.Join(home, "nested-ignore"))
			os.WriteFile(filepath.Join(home, "outer-ignore"), []byte("*.bak\n"), 0o644)
			git(t, dir, "config", "core.excludesFile", filepath.Join(home, "outer-ignore"))
		}},
		{name: "nested repository: its tracked files stay in scope", files: map[string]string{
			"nested/.gitignore": "*.lock\nvendor/\n", "nested/yarn.lock": "", "nested/other.lock": "",
			"nested/vendor/a.go": "", "nested/vendor/b.go": "",
		}, setup: func(t *testing.T, dir string) {
			n := filepath.Join(dir, "nested")
			git(t, n, "init", "-q")
			git(t, n, "add", "-f", "yarn.lock", "vendor/a.go")
		}},
		{name: "a repository nested in a nested one", files: map[string]string{
			"a/b/c.tmp": "", "a/b/d.txt": "", "a/e.tmp": "",
		}, setup: func(t *testing.T, dir string) {
			git(t, filepath.Join(dir, "a"), "init", "-q")
			git(t, filepath.Join(dir, "a", "b"), "init", "-q")
			os.WriteFile(filepath.Join(dir, "a/b/.git/info/exclude"), []byte("*.tmp\n"), 0o644)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			writeTree(t, dir, tt.files)
			tt.setup(t, dir)
			want := gitFilesDeep(t, dir)
			if got := walkFiles(t, dir); !slices.Equal(got, want) {
				t.Errorf("walk differs from git\n got: %q\nwant: %q", got, want)
			}
		})
	}
}

// TestRestoreSparesByTheRulesOfItsTime: files the snapshot's rules ignored
// — from .git/info/exclude, core.excludesFile, a nested repository's own
// info/exclude — are spared by a restore after those rules changed and
// brought them into scope: the snapshot keeps the rules it was taken with.
func TestRestoreSparesByTheRulesOfItsTime(t *testing.T) {
	home := gitHome(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	writeTree(t, dir, map[string]string{"a.go": "a", "x.log": "log", "y.bak": "bak", "nested/b.go": "b", "nested/z.tmp": "tmp"})
	git(t, filepath.Join(dir, "nested"), "init", "-q")
	os.WriteFile(filepath.Join(dir, ".git/info/exclude"), []byte("*.log\n"), 0o644)
	os.WriteFile(filepath.Join(home, "ignore"), []byte("*.bak\n"), 0o644)
	git(t, dir, "config", "core.excludesFile", filepath.Join(home, "ignore"))
	os.WriteFile(filepath.Join(dir, "nested/.git/info/exclude"), []byte("*.tmp\n"), 0o644)
	snaps := t.TempDir()
	_, m := layerSave(t, dir, snaps, 0, 0)
	for _, e := range m.Entries {
		if slices.Contains([]string{"x.log", "y.bak", "nested/z.tmp"}, e.Path) {
			t.Fatalf("%s captured although ignored", e.Path)
		}
	}
	// The rules change: nothing is ignored any more.
	os.WriteFile(filepath.Join(dir, ".git/info/exclude"), nil, 0o644)
	os.WriteFile(filepath.Join(home, "ignore"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "nested/.git/info/exclude"), nil, 0o644)
	res, err := Restore(context.Background(), dir, "", RestoreOptions{Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"x.log", "y.bak", "nested/z.tmp"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v: deleted by a restore, though the snapshot's rules ignored it", p, err)
		}
	}
	if len(res.LeftIgnored) != 3 {
		t.Errorf("spared %v, want the three", res.LeftIgnored)
	}
}
