package snap

import (
	"os"
	"path/filepath"
	"strings"
)

// stateFolders are the folders Rewind and the agents keep their own state
// in: Rewind's home (stores in global mode, logs, binaries) and each agent's
// sessions and settings. Each is a folder under HOME, and, where the tool
// lets an environment variable move it, that variable's folder too (joined
// with sub). When the tree being snapshotted or restored holds one of them —
// a project in HOME, say — it is never captured, compared, deleted or
// written: a restore in HOME would otherwise delete the store's own newer
// checkpoints, or cut a live transcript.
var stateFolders = []struct{ home, env, sub string }{
	{home: ".rewind", env: "REWIND_HOME"},
	{home: ".claude", env: "CLAUDE_CONFIG_DIR"},
	{home: ".factory"},
	{home: ".codex", env: "CODEX_HOME"},
	{home: ".gemini"},
	{home: ".copilot"},
	{home: ".pi"},
	{home: ".local/share/opencode", env: "XDG_DATA_HOME", sub: "opencode"},
	{home: ".config/opencode", env: "XDG_CONFIG_HOME", sub: "opencode"},
}

// StateFolders lists the absolute folders of stateFolders for the current
// environment.
func StateFolders() []string {
	home, _ := os.UserHomeDir()
	var out []string
	for _, f := range stateFolders {
		if home != "" {
			out = append(out, filepath.Join(home, filepath.FromSlash(f.home)))
		}
		if v := os.Getenv(f.env); f.env != "" && v != "" {
			out = append(out, filepath.Join(v, f.sub))
		}
	}
	return out
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
