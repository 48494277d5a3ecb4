package snap

import (
	"bytes"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"rewind.dev/internal/gitdir"
)

// A .git file is what makes a folder a submodule or a linked worktree: one
// line, "gitdir: PATH", naming where the repository's data is (the
// superproject's .git/modules/NAME, the main worktree's .git/worktrees/NAME).
// A snapshot holds it as any file, wherever it lies in the tree, the
// root's own included (a root that is a linked worktree); a .git folder —
// a repository's data — it never holds, nor anything inside one, and a
// restore never writes into or deletes one. No ignore pattern applies to a
// .git file, as none applies to .git in git.
//
// A snapshot holds only a .git file of that form, of at most gitFileMax
// bytes, whose PATH leads out of the tree or into a .git folder of it
// (gitFileOK); a save leaves any other out, as it did every .git file
// before. One whose PATH leads elsewhere in the tree names a folder a
// restore writes: a hostile snapshot could make one there, a repository
// of its own making, whose configuration git runs commands from in the
// folder the .git file makes its worktree. A restore refuses such a file
// before it changes anything.

// gitFileMax bounds a .git file a snapshot holds: git writes one line.
const gitFileMax = 4 << 10

// isGitName reports whether el, one element of a path, names git's .git on
// a file system that compares names as fold does.
func isGitName(el string, fold Folding) bool {
	return el == ".git" || fold.Folds() && len(el) <= 16 && fold.Key(el) == ".git"
}

// gitFileOK reports whether b, the content of the .git file at rel (a path
// of the tree), is one a snapshot holds (see above). roots are the root's
// paths, as given and with its symlinks resolved (resolvedForms), for a
// PATH given absolute.
func gitFileOK(roots []string, rel string, b []byte) bool {
	if len(b) > gitFileMax {
		return false
	}
	target, ok := gitdir.Target(b)
	if !ok {
		return false
	}
	in := "" // PATH from the root, where it lies in the tree
	if filepath.IsAbs(target) {
		for _, r := range roots {
			if p, err := filepath.Rel(r, target); err == nil && !leavesRoot(filepath.ToSlash(p)) {
				in = filepath.ToSlash(p)
				break
			}
		}
		if in == "" {
			return true
		}
	} else {
		in = path.Join(path.Dir(rel), filepath.ToSlash(target))
		if leavesRoot(in) {
			return true
		}
	}
	return slices.Contains(strings.Split(in, "/"), ".git")
}

// leavesRoot reports whether the clean relative path p leads out of the
// folder it is relative to.
func leavesRoot(p string) bool { return p == ".." || strings.HasPrefix(p, "../") }

// checkGitFile reads the content of the snapshot's .git file e from r,
// refusing one a snapshot never holds (see gitFileOK), and returns a reader
// of it.
func (p *restorePlan) checkGitFile(e *Entry, r io.Reader, archive string) (io.Reader, error) {
	b, err := io.ReadAll(io.LimitReader(r, gitFileMax+1))
	if err != nil {
		if p.ctx.Err() != nil {
			return nil, p.ctx.Err()
		}
		return nil, archiveReadErr(e, err)
	}
	if p.gitRoots == nil {
		p.gitRoots = resolvedForms(p.root)
	}
	if !gitFileOK(p.gitRoots, e.Path, b) {
		if archive == "" {
			archive = e.Src
		}
		return nil, &ArchiveError{Archive: archive, Entry: e.Path, Reason: "a .git file that names no repository outside the tree or in a .git folder of it: it could lead git to one the snapshot made"}
	}
	return bytes.NewReader(b), nil
}
