package snap

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"

	"rewind.dev/internal/gitdir"
	"rewind.dev/snap/gitignore"
	"rewind.dev/snap/gitindex"
)

// gitContext is what a walk needs from a git repository whose files it
// reads — the one holding the walk root, if any, or one nested inside the
// tree: the repository-wide exclude lists, the .gitignore files of the
// folders between the repository top and the root, and the tracked paths
// (git never ignores a tracked file). Inside a nested repository only its
// own rules apply, as they do for git run there.
type gitContext struct {
	base    string           // the repository's top relative to the root; "" for the root's own
	global  []gitignore.List // info/exclude, then the global excludes file
	parents []gitignore.List // .gitignore files above the root, outermost first (base "")
	tracked *gitindex.Paths  // paths relative to the root (base ""), or to base; nil outside a repository
	rules   RepoRules        // the texts of global and parents, as a snapshot records them
}

// Rules are the ignore rules a snapshot was taken under that do not live in
// the tree: each repository's (RepoRules) and Rewind's configured patterns.
// A manifest records them, so that a restore tells what the snapshot's rules
// ignored by the rules of its time, not by today's.
type Rules struct {
	Repos  []RepoRules `json:"repos,omitempty"`
	Ignore []string    `json:"ignore,omitempty"` // WalkOptions.Ignore
	// GitFiles says the snapshot holds the .git files that make folders
	// submodules and linked worktrees (see gitFileMax): every walk's does,
	// one recorded before they were held does not.
	GitFiles bool `json:"git_files,omitempty"`
}

// RepoRules are a repository's rules from outside the tree.
type RepoRules struct {
	Base         string        `json:"base,omitempty"`          // the repository's top relative to the root; "" for the root's own
	Prefix       string        `json:"prefix,omitempty"`        // base "": the root's path from the repository's top, with a final "/"
	Exclude      string        `json:"exclude,omitempty"`       // info/exclude
	ExcludesFile string        `json:"excludes_file,omitempty"` // the text of core.excludesFile, or of git's default one
	Parents      []ParentRules `json:"parents,omitempty"`       // base "": .gitignore files above the root, outermost first
}

// ParentRules is a .gitignore file above the root: its text, and the path
// from its folder down to the root (with a final "/").
type ParentRules struct {
	Prefix string `json:"prefix"`
	Text   string `json:"text"`
}

// loadGitContext finds the repository of root by looking for ".git" in root
// and its parents, the way git does, and reads what ignore decisions need:
// its rules and, with tracked, its tracked paths (a walk's; a million paths
// are 28 MB, and what a snapshot's rules judge needs only the rules).
// Outside a repository it still applies the global excludes file, so a tree
// is captured the same way whether or not it is under git.
func loadGitContext(root string, tracked bool) (gitContext, error) {
	top, gitDir := gitdir.Find(root)
	prefix := ""
	if gitDir != "" {
		p, _ := filepath.Rel(top, root)
		if p = filepath.ToSlash(p); p != "." {
			prefix = p
		}
	}
	gc, err := repoContext(top, gitDir, "", prefix, tracked)
	if prefix != "" {
		gc.rules.Parents = parentIgnores(top, prefix)
	}
	gc.build()
	return gc, err
}

// nestedGitContext reads the rules of the repository whose top is the
// tree's folder rel (absolute abs), or reports that it is none.
func nestedGitContext(abs, rel string, tracked bool) (gitContext, bool, error) {
	gitDir := gitdir.Of(abs)
	if gitDir == "" {
		return gitContext{}, false, nil
	}
	gc, err := repoContext(abs, gitDir, rel, "", tracked)
	gc.build()
	return gc, true, err
}

// repoContext reads a repository's exclude lists and, with tracked, its
// tracked paths (the global excludes file alone when gitDir is ""): top is
// its work tree, base where its top lies in the tree, prefix where the root
// lies below its top.
func repoContext(top, gitDir, base, prefix string, tracked bool) (gitContext, error) {
	gc := gitContext{base: base, rules: RepoRules{Base: base}}
	var err error
	if prefix != "" {
		gc.rules.Prefix = prefix + "/"
	}
	if gitDir != "" {
		commonDir := gitdir.Common(gitDir)
		if b, err := os.ReadFile(filepath.Join(commonDir, "info", "exclude")); err == nil {
			gc.rules.Exclude = string(b)
		}
		if tracked {
			format, _ := gitConfigValue(filepath.Join(commonDir, "config"), "extensions", "objectformat")
			gc.tracked, err = gitindex.Tracked(top, gitDir, prefix, format)
		}
	}
	if f := globalExcludesFile(gitDir); f != "" {
		if b, err := os.ReadFile(f); err == nil {
			gc.rules.ExcludesFile = string(b)
		}
	}
	return gc, err
}

// build parses the rule texts into the pattern lists the walk applies.
func (gc *gitContext) build() {
	r := &gc.rules
	gc.global, gc.parents = nil, nil
	for _, text := range []string{r.Exclude, r.ExcludesFile} {
		if text != "" {
			gc.global = append(gc.global, gitignore.List{Base: r.Base, Prefix: r.Prefix, Patterns: gitignore.Parse([]byte(text))})
		}
	}
	for _, p := range r.Parents {
		gc.parents = append(gc.parents, gitignore.List{Prefix: p.Prefix, Patterns: gitignore.Parse([]byte(p.Text))})
	}
}

// parentIgnores reads the .gitignore files of the folders from top down to
// (not including) the root at top/prefix. Each list sees paths as git does,
// relative to its own folder: its prefix is the way from there to the root.
// A symlinked .gitignore is not followed, as git does not.
func parentIgnores(top, prefix string) []ParentRules {
	var out []ParentRules
	parts := strings.Split(prefix, "/")
	for i := range parts {
		dirRel := strings.Join(parts[:i], "/")
		b, ok := readIgnoreFile(atCWD, filepath.Join(top, filepath.FromSlash(dirRel), ".gitignore"))
		if !ok {
			continue
		}
		out = append(out, ParentRules{Prefix: strings.Join(parts[i:], "/") + "/", Text: string(b)})
	}
	return out
}

// readIgnoreFile reads an ignore file of the tree (name relative to the
// folder at, or a path with atCWD) when it is a regular file: git does
// not follow a symlinked .gitignore, nor read a FIFO, and neither does the
// walk.
func readIgnoreFile(at dirFD, name string) ([]byte, bool) {
	f, err := openAt(at, name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return b, err == nil
}

// globalExcludesFile returns core.excludesFile from the git configuration
// (repository, then global, then XDG), or git's default
// $XDG_CONFIG_HOME/git/ignore.
func globalExcludesFile(gitDir string) string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var configs []string
	if gitDir != "" {
		configs = append(configs, filepath.Join(gitDir, "config"))
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"))
	}
	if xdg != "" {
		configs = append(configs, filepath.Join(xdg, "git", "config"))
	}
	for _, c := range configs {
		if v, ok := gitConfigValue(c, "core", "excludesfile"); ok {
			if rest, ok := strings.CutPrefix(v, "~/"); ok && home != "" {
				v = filepath.Join(home, rest)
			}
			return v
		}
	}
	if xdg != "" {
		return filepath.Join(xdg, "git", "ignore")
	}
	return ""
}

// gitConfigValue reads one key from a git config file: enough of the format
// for core.excludesFile (sections, case-insensitive keys, quoted values,
// comments). Include directives are not followed.
func gitConfigValue(file, section, key string) (string, bool) {
	f, err := os.Open(file)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var cur, val string
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			cur = strings.ToLower(strings.TrimSpace(strings.SplitN(line[1:end], " ", 2)[0]))
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if cur != section {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), key) {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.HasPrefix(v, "\"") {
			v = strings.TrimSpace(v[:i])
		}
		v = strings.Trim(v, "\"")
		val, found = v, true // the last value wins, as in git
	}
	return val, found
}

// isTracked reports whether path (relative to the root) is tracked, and
// trackedUnder whether any tracked path lies inside folder dir.
func (gc *gitContext) isTracked(path string) bool { return gc.tracked.Has(gc.local(path)) }

func (gc *gitContext) trackedUnder(dir string) bool { return gc.tracked.AnyUnder(gc.local(dir)) }

// local is path relative to the repository's top (for a nested one).
func (gc *gitContext) local(path string) string {
	if gc.base == "" {
		return path
	}
	return strings.TrimPrefix(path, gc.base+"/")
}
