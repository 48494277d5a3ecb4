// Package gitignore decides which paths ignore files leave out, as git's
// dir.c does (gitignore(5)): it parses a .gitignore-style file into patterns
// and stacks the lists of a walk's folders the way git gives them
// precedence. Patterns match with git's wildmatch. Reading the files is the
// caller's part.
package gitignore

import (
	"bytes"
	"strings"

	"rewind.dev/snap/wildmatch"
)

// A Pattern is one line of a .gitignore-style file, parsed as git parses it
// (gitignore(5)): comments, escaped and trailing spaces, "!" negation, a
// trailing "/" for directories only, and anchoring when a slash appears at the
// start or in the middle.
type Pattern struct {
	glob     string // the wildmatch pattern, without "!", leading "/" or trailing "/"
	negate   bool
	dirOnly  bool
	anchored bool // matched against the path relative to the file's folder, not the base name
}

// List is the patterns of one ignore file, in file order, and the folder
// (slash-separated, relative to the walk root, "" for the root) they apply under.
// A list from a folder above the walk root has base "" and a prefix: the path
// from its folder down to the root, ending in "/", prepended before matching.
type List struct {
	Base     string
	Prefix   string
	Patterns []Pattern
	Rewind   bool // Rewind's own rules (.rewindignore, configured patterns): they reach into nested repositories
}

// Parse parses the contents of one ignore file.
func Parse(data []byte) []Pattern {
	var out []Pattern
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // git skips a UTF-8 BOM
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if p, ok := parsePattern(string(line)); ok {
			out = append(out, p)
		}
	}
	return out
}

func parsePattern(line string) (Pattern, bool) {
	if line == "" || line[0] == '#' {
		return Pattern{}, false
	}
	// Trailing spaces are dropped unless escaped with a backslash.
	end := len(line)
	for end > 0 && line[end-1] == ' ' {
		if end >= 2 && line[end-2] == '\\' {
			break
		}
		end--
	}
	line = line[:end]
	var p Pattern
	if strings.HasPrefix(line, "!") {
		p.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, "\\/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return Pattern{}, false
	}
	if strings.Contains(line, "/") {
		p.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	p.glob = line
	return p, true
}

// match reports whether the pattern matches rel, a path relative to the
// pattern file's folder.
func (p *Pattern) match(rel string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if p.anchored {
		return wildmatch.Match(p.glob, rel, true)
	}
	name := rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		name = rel[i+1:]
	}
	return wildmatch.Match(p.glob, name, true)
}

// Stack is the ignore rules in force for one folder during a walk:
// the pattern lists from the deepest folder outward (including those above the
// root), then the repository-wide lists (.git/info/exclude, the global
// excludes file). Git decides with the
// first list, in that order, that has any matching pattern; inside a list the
// last matching pattern wins.
type Stack struct {
	dirs   []List // outermost first
	global []List // lowest precedence last
}

// NewStack is a stack of the repository-wide lists global alone.
func NewStack(global []List) *Stack { return &Stack{global: global} }

// Push is the stack with l, a deeper folder's list, on top; s itself is
// left as it is, for the folders beside that one.
func (s *Stack) Push(l List) *Stack {
	if len(l.Patterns) == 0 {
		return s
	}
	n := &Stack{dirs: make([]List, len(s.dirs), len(s.dirs)+1), global: s.global}
	copy(n.dirs, s.dirs)
	n.dirs = append(n.dirs, l)
	return n
}

// Nested is the stack inside a repository nested in the tree, whose
// repository-wide lists are global: git's rules from outside it do not reach
// into it; Rewind's own do.
func (s *Stack) Nested(global []List) *Stack {
	n := &Stack{global: global}
	for _, l := range s.dirs {
		if l.Rewind {
			n.dirs = append(n.dirs, l)
		}
	}
	return n
}

// Ignored reports whether rel (relative to the walk root) is ignored.
func (s *Stack) Ignored(rel string, isDir bool) bool {
	for i := len(s.dirs) - 1; i >= 0; i-- {
		if m, neg := s.dirs[i].Decide(rel, isDir); m {
			return !neg
		}
	}
	for i := range s.global {
		if m, neg := s.global[i].Decide(rel, isDir); m {
			return !neg
		}
	}
	return false
}

// Decide returns whether any pattern of l matches rel and, if so, whether the
// deciding (last matching) pattern is a negation.
func (l *List) Decide(rel string, isDir bool) (matched, negate bool) {
	sub := l.Prefix + rel
	if l.Base != "" {
		if !strings.HasPrefix(rel, l.Base+"/") {
			return false, false
		}
		sub = rel[len(l.Base)+1:]
	}
	for i := len(l.Patterns) - 1; i >= 0; i-- {
		if l.Patterns[i].match(sub, isDir) {
			return true, l.Patterns[i].negate
		}
	}
	return false, false
}

// Lines parses patterns given one per item, as the lines of one file at the
// root.
func Lines(items []string) *List {
	return &List{Patterns: Parse([]byte(strings.Join(items, "\n")))}
}

// Excludes reports whether the list takes path (slash-separated, relative
// to its folder), or a folder above it, as git would take it for ignored.
// It is for a path met on its own, not in a walk that stops at an ignored
// folder.
func (l *List) Excludes(path string, isDir bool) bool {
	if l == nil || len(l.Patterns) == 0 {
		return false
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			if m, neg := l.Decide(path[:i], true); m && !neg {
				return true
			}
		}
	}
	m, neg := l.Decide(path, isDir)
	return m && !neg
}
