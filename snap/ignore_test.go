package snap

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMain isolates git and the walk from the developer's own
// configuration for the whole run: HOME and XDG_CONFIG_HOME point into an
// empty folder nothing writes in, so tests that only read them can run in
// parallel. A test that writes a configuration there takes its own
// (gitHome).
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "snap-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// gitEnv skips the test where git, the oracle for ignore rules, is not
// installed. HOME is the run's empty one (see TestMain).
func gitEnv(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: it is the oracle for ignore rules")
	}
}

// gitHome is gitEnv with a HOME of the test's own, returned, for a test
// that writes a configuration there. It sets the environment: such a test
// cannot run in parallel.
func gitHome(t *testing.T) string {
	t.Helper()
	gitEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	return home
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	var stderr strings.Builder
	cmd.Stderr = &stderr // warnings (a symlinked .gitignore) are not output
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return string(out)
}

// gitFiles is what git lists as not ignored: tracked and untracked files.
func gitFiles(t *testing.T, dir string) []string {
	out := git(t, dir, "ls-files", "-z", "-co", "--exclude-standard")
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	return files
}

// walkFiles is what a snapshot would capture, files and symlinks only (git
// lists no folders).
func walkFiles(t *testing.T, dir string) []string {
	t.Helper()
	tree, err := Walk(context.Background(), dir, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range tree.Entries {
		if e.Kind != KindDir {
			files = append(files, e.Path)
		}
	}
	slices.Sort(files)
	return files
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWalkMatchesGit(t *testing.T) {
	home := gitHome(t)
	tests := []struct {
		name    string
		files   map[string]string
		tracked []string // git add -f before comparing
		setup   func(t *testing.T, dir string)
	}{
		{name: "nested gitignore and negation", files: map[string]string{
			".gitignore": "*.log\n!keep.log\nbuild/\n/only-root.txt\n",
			"a.log":      "", "keep.log": "", "only-root.txt": "", "sub/only-root.txt": "",
			"build/out.o": "", "sub/build/x": "", "src/main.go": "",
			"src/.gitignore": "*.tmp\n!important.tmp\ngen/\n",
			"src/x.tmp":      "", "src/important.tmp": "", "src/gen/y.go": "", "src/deep/z.tmp": "",
			"src/deep/.gitignore": "!z.tmp\n",
		}},
		{name: "double star and anchored middle slash", files: map[string]string{
			".gitignore":  "docs/**/*.html\n**/cache\nfoo/bar\n*.o\n!lib/*.o\n",
			"docs/a.html": "", "docs/x/y/b.html": "", "docs/keep.md": "",
			"cache/c": "", "deep/er/cache/c": "", "foo/bar": "", "x/foo/bar": "",
			"a.o": "", "lib/b.o": "", "lib/sub/c.o": "",
		}},
		{name: "negation cannot reach into an excluded folder", files: map[string]string{
			".gitignore":         "logs/\n!logs/important.log\nout/*\n!out/keep\n",
			"logs/important.log": "", "logs/other.log": "", "out/keep": "", "out/drop": "",
		}},
		{name: "brackets, escapes and spaces", files: map[string]string{
			".gitignore": "[abc].txt\n\\#hash\nspace\\ \ntrailing   \n\\!bang\n*.[oa]\n",
			"a.txt":      "", "d.txt": "", "#hash": "", "space ": "", "trailing": "", "!bang": "", "x.o": "", "y.a": "", "z.c": "",
		}},
		{name: "info exclude, global excludes and rewindignore", files: map[string]string{
			"secret.key": "", "notes.scratch": "", "src/a.go": "", "src/b.gen.go": "",
		}, setup: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("*.key\n"), 0o644)
			os.MkdirAll(filepath.Join(home, ".config", "git"), 0o755)
			os.WriteFile(filepath.Join(home, ".config", "git", "ignore"), []byte("*.scratch\n"), 0o644)
		}},
		{name: "core.excludesFile in global config", files: map[string]string{
			"a.bak": "", "b.txt": "",
		}, setup: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(home, "myignore"), []byte("*.bak\n"), 0o644)
			os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\texcludesFile = ~/myignore\n"), 0o644)
		}},
		{name: "tracked files stay in scope even when ignored", files: map[string]string{
			".gitignore": "vendor/\n*.lock\n", "vendor/lib/a.go": "", "vendor/lib/b.go": "", "yarn.lock": "", "other.lock": "",
		}, tracked: []string{"vendor/lib/a.go", "yarn.lock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(home, ".gitconfig"))
			os.RemoveAll(filepath.Join(home, ".config"))
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			writeTree(t, dir, tt.files)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			if len(tt.tracked) > 0 {
				git(t, dir, append([]string{"add", "-f"}, tt.tracked...)...)
			}
			want := gitFiles(t, dir)
			if got := walkFiles(t, dir); !slices.Equal(got, want) {
				t.Errorf("walk differs from git ls-files -co --exclude-standard\n got: %q\nwant: %q", got, want)
			}
		})
	}
}

// TestWalkRewindIgnore checks what git does not know: .rewindignore (with
// precedence over .gitignore in the same folder) and the built-in excludes.
func TestWalkRewindIgnore(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	writeTree(t, dir, map[string]string{
		".gitignore": ".env\n", ".rewindignore": "big/\n!.env\n", ".env": "", "big/blob": "", "a.go": "",
		".agent/rewind/checkpoints/x": "", ".agent/notes.md": "", "sub/.git": "gitdir: elsewhere\n", "sub/a": "",
	})
	got := walkFiles(t, dir)
	want := []string{".agent/notes.md", ".env", ".gitignore", ".rewindignore", "a.go", "sub/a"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWalkOutsideGitAndInSubfolder: the same rules outside a repository, and
// a root below the repository top sees its parents' .gitignore files.
func TestWalkOutsideGitAndInSubfolder(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	plain := t.TempDir()
	writeTree(t, plain, map[string]string{".gitignore": "*.o\n", "a.o": "", "a.c": "", "d/.gitignore": "!a.o\n", "d/a.o": ""})
	if got, want := walkFiles(t, plain), []string{".gitignore", "a.c", "d/.gitignore", "d/a.o"}; !slices.Equal(got, want) {
		t.Errorf("outside git: got %q, want %q", got, want)
	}
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	writeTree(t, repo, map[string]string{".gitignore": "*.o\nproj/gen/\n", "proj/a.o": "", "proj/a.c": "", "proj/gen/x": ""})
	sub := filepath.Join(repo, "proj")
	want := strings.Fields(git(t, sub, "ls-files", "-co", "--exclude-standard"))
	slices.Sort(want)
	if got := walkFiles(t, sub); !slices.Equal(got, want) {
		t.Errorf("subfolder: got %q, want %q", got, want)
	}
}

// TestWalkMatchesGitRandom compares with git on random trees and random
// ignore files built from a vocabulary of the tricky pattern forms.
func TestWalkMatchesGitRandom(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	names := []string{"a", "b", "ab", "a.o", "b.log", "x.txt", "build", "cache", "Doc", "d1", "[x]", "#h", "!n"}
	pats := []string{"*.o", "!*.o", "a", "/a", "a/", "b*", "!b", "build/", "**/cache", "cache/**", "d1/*", "!d1/a",
		"*/x.txt", "[ab]", "[!a]*", "\\#h", "\\!n", "**/a/**", "d?", "*.log", "!/b.log", "Doc/*/x.txt", "a/**/b"}
	iters := 60
	if testing.Short() {
		iters = 15
	}
	for it := 0; it < iters; it++ {
		rng := rand.New(rand.NewSource(int64(it)))
		dir := t.TempDir()
		git(t, dir, "init", "-q")
		var mk func(rel string, depth int)
		mk = func(rel string, depth int) {
			for i := 0; i < 2+rng.Intn(4); i++ {
				name := names[rng.Intn(len(names))]
				p := filepath.Join(dir, rel, name)
				if _, err := os.Lstat(p); err == nil {
					continue
				}
				if depth < 3 && rng.Intn(3) == 0 {
					os.MkdirAll(p, 0o755)
					mk(filepath.Join(rel, name), depth+1)
				} else {
					os.WriteFile(p, nil, 0o644)
				}
				if rng.Intn(4) == 0 {
					var b bytes.Buffer
					for j := 0; j < 1+rng.Intn(4); j++ {
						fmt.Fprintln(&b, pats[rng.Intn(len(pats))])
					}
					os.WriteFile(filepath.Join(dir, rel, ".gitignore"), b.Bytes(), 0o644)
				}
			}
		}
		mk("", 0)
		want := gitFiles(t, dir)
		if got := walkFiles(t, dir); !slices.Equal(got, want) {
			var ign bytes.Buffer
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if d.Name() == ".gitignore" {
					b, _ := os.ReadFile(p)
					fmt.Fprintf(&ign, "%s:\n%s", p, b)
				}
				return nil
			})
			t.Fatalf("iteration %d: walk differs from git\n got: %q\nwant: %q\n%s", it, got, want, ign.String())
		}
	}
}
