// Package gitdir finds the git repository a folder lies in the way git
// does — a ".git" folder, or a ".git" file naming the git directory of a
// linked worktree or a submodule, in the folder or the nearest one above —
// and the folder its worktrees share. It reads files only, and runs no git:
// a save asks it every time, and a snapshot's walk for every repository.
package gitdir

import (
	"os"
	"path/filepath"
	"strings"
)

// Of returns the git directory of the repository whose top is dir (its
// ".git" folder, or where its ".git" file points), or "".
func Of(dir string) string {
	p := filepath.Join(dir, ".git")
	fi, err := os.Lstat(p)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		return p
	}
	// A worktree or submodule: ".git" is a file "gitdir: PATH".
	if !fi.Mode().IsRegular() {
		return ""
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	if g, ok := Target(b); ok {
		if !filepath.IsAbs(g) {
			g = filepath.Join(dir, g)
		}
		return g
	}
	return ""
}

// Target returns the path a ".git" file's content b names, as git reads
// it: "gitdir: PATH" on one line, its line end (\n, \r\n) left out. A
// relative PATH is from the folder holding the file.
func Target(b []byte) (string, bool) {
	s, ok := strings.CutPrefix(string(b), "gitdir: ")
	if !ok {
		return "", false
	}
	s = strings.TrimRight(s, "\r\n")
	if s == "" || strings.ContainsAny(s, "\x00\r\n") {
		return "", false
	}
	return s, true
}

// Find returns the top of the work tree dir lies in (dir or the nearest
// folder above it with a repository: Of) and its git directory, or "" "".
func Find(dir string) (top, gitDir string) {
	for {
		if g := Of(dir); g != "" {
			return dir, g
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}

// Common returns the folder of what the worktrees of gitDir's repository
// share (info/exclude, the config, the objects): the folder gitDir's
// "commondir" file names, for a linked worktree; else gitDir itself.
func Common(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return c
}
