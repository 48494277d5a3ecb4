package snap

import (
	"os"
	"path/filepath"
	"strings"

	"rewind.dev/internal/agents"
	"rewind.dev/internal/layout"
)

// StateFolders lists the folders Rewind and the agents keep their own state in, for the
// current environment: Rewind's home (stores in global mode, logs, binaries) and each agent's
// folders as its manifest names them (rewind.dev/internal/agents), each as its environment
// variable moves it and as it is without. When the tree being snapshotted or restored holds
// one of them (a project in HOME, say) it is never captured, compared, deleted or written: a
// restore in HOME would otherwise delete the store's own newer checkpoints, or cut a live
// transcript.
func StateFolders() []string {
	home, _ := os.UserHomeDir()
	var out []string
	if home != "" {
		out = append(out, filepath.Join(home, layout.HomeName))
	}
	if v := os.Getenv("REWIND_HOME"); v != "" {
		out = append(out, filepath.Clean(v))
	}
	return append(out, agents.StateFolders(home, os.Getenv)...)
}

// stateExcludes returns the state folders that lie strictly inside root, as
// slash-separated paths relative to it. Both sides are compared as given
// and with their symlinks resolved, so a HOME reached through a symlink is
// still recognised.
func stateExcludes(root string) map[string]bool {
	roots := resolvedForms(root)
	out := map[string]bool{}
	for _, f := range StateFolders() {
		for _, abs := range resolvedForms(f) {
			for _, r := range roots {
				rel, err := filepath.Rel(r, abs)
				if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
					continue
				}
				out[filepath.ToSlash(rel)] = true
			}
		}
	}
	return out
}

// resolvedForms is p made absolute, and also with its symlinks resolved when
// that differs (the last existing folder is resolved for a path that does
// not exist yet).
func resolvedForms(p string) []string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil
	}
	out := []string{abs}
	dir, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			if r = filepath.Join(r, rest); r != abs {
				out = append(out, r)
			}
			return out
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return out
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// underAny reports whether rel is one of dirs or lies inside one of them.
func underAny(rel string, dirs map[string]bool) bool {
	if len(dirs) == 0 {
		return false
	}
	for p := rel; ; {
		if dirs[p] {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}
