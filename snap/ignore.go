package snap

import (
	"bytes"
	"strings"
)

// A pattern is one line of a .gitignore-style file, parsed as git parses it
// (gitignore(5)): comments, escaped and trailing spaces, "!" negation, a
// trailing "/" for directories only, and anchoring when a slash appears at the
// start or in the middle.
type pattern struct {
	glob     string // the wildmatch pattern, without "!", leading "/" or trailing "/"
	negate   bool
	dirOnly  bool
	anchored bool // matched against the path relative to the file's folder, not the base name
}

// patternList is the patterns of one ignore file, in file order, and the folder
// (slash-separated, relative to the walk root, "" for the root) they apply under.
// A list from a folder above the walk root has base "" and a prefix: the path
// from its folder down to the root, ending in "/", prepended before matching.
type patternList struct {
	base     string
	prefix   string
	patterns []pattern
	rewind   bool // Rewind's own rules (.rewindignore, configured patterns): they reach into nested repositories
}

// parsePatterns parses the contents of one ignore file.
func parsePatterns(data []byte) []pattern {
	var out []pattern
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

func parsePattern(line string) (pattern, bool) {
	if line == "" || line[0] == '#' {
		return pattern{}, false
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
	var p pattern
	if strings.HasPrefix(line, "!") {
		p.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, "\\/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return pattern{}, false
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
func (p *pattern) match(rel string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if p.anchored {
		return wildmatch(p.glob, rel, true) == wmMatch
	}
	name := rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		name = rel[i+1:]
	}
	return wildmatch(p.glob, name, true) == wmMatch
}

// ignoreStack is the ignore rules in force for one folder during a walk:
// the pattern lists from the deepest folder outward (including those above the
// root), then the repository-wide lists (.git/info/exclude, the global
// excludes file). Git decides with the
// first list, in that order, that has any matching pattern; inside a list the
// last matching pattern wins.
type ignoreStack struct {
	dirs   []patternList // outermost first
	global []patternList // lowest precedence last
}

func (s *ignoreStack) push(l patternList) *ignoreStack {
	if len(l.patterns) == 0 {
		return s
	}
	n := &ignoreStack{dirs: make([]patternList, len(s.dirs), len(s.dirs)+1), global: s.global}
	copy(n.dirs, s.dirs)
	n.dirs = append(n.dirs, l)
	return n
}

// nested is the stack inside a repository nested in the tree, whose
// repository-wide lists are global: git's rules from outside it do not reach
// into it; Rewind's own do.
func (s *ignoreStack) nested(global []patternList) *ignoreStack {
	n := &ignoreStack{global: global}
	for _, l := range s.dirs {
		if l.rewind {
			n.dirs = append(n.dirs, l)
		}
	}
	return n
}

// ignored reports whether rel (relative to the walk root) is ignored.
func (s *ignoreStack) ignored(rel string, isDir bool) bool {
	for i := len(s.dirs) - 1; i >= 0; i-- {
		if m, neg := s.dirs[i].decide(rel, isDir); m {
			return !neg
		}
	}
	for i := range s.global {
		if m, neg := s.global[i].decide(rel, isDir); m {
			return !neg
		}
	}
	return false
}

// decide returns whether any pattern of l matches rel and, if so, whether the
// deciding (last matching) pattern is a negation.
func (l *patternList) decide(rel string, isDir bool) (matched, negate bool) {
	sub := l.prefix + rel
	if l.base != "" {
		if !strings.HasPrefix(rel, l.base+"/") {
			return false, false
		}
		sub = rel[len(l.base)+1:]
	}
	for i := len(l.patterns) - 1; i >= 0; i-- {
		if l.patterns[i].match(sub, isDir) {
			return true, l.patterns[i].negate
		}
	}
	return false, false
}

// wildmatch results, as in git's wildmatch.c: abortAll and abortToStarStar
// let a failed "*" stop trying further positions early.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildmatch matches text against a glob as git's wildmatch does, the one glob engine that
// the ignore rules and the pathspecs share. With pathname (git's WM_PATHNAME, as
// .gitignore and a pathspec's glob magic use it) "*", "?" and brackets never match "/",
// and "**" between slashes (or at either end) matches any number of folders; without it
// (a plain pathspec) "*" matches any run of bytes, slashes too, and "?" and brackets any
// byte. An unterminated bracket matches nothing.
func wildmatch(pat, text string, pathname bool) int { return dowild(pat, 0, text, pathname) }

func dowild(pat string, pi int, text string, pathname bool) int {
	for ; pi < len(pat); pi, text = pi+1, text[1:] {
		pc := pat[pi]
		if len(text) == 0 && pc != '*' {
			return wmAbortAll
		}
		switch pc {
		case '\\':
			pi++
			if pi >= len(pat) || text[0] != pat[pi] {
				return wmNoMatch
			}
		case '?':
			if pathname && text[0] == '/' {
				return wmNoMatch
			}
		case '*':
			matchSlash := !pathname // without WM_PATHNAME, * is **
			if pi+1 < len(pat) && pat[pi+1] == '*' {
				prev := pi - 1
				for pi < len(pat) && pat[pi] == '*' {
					pi++
				}
				if pathname && (prev < 0 || pat[prev] == '/') &&
					(pi == len(pat) || pat[pi] == '/' || (pat[pi] == '\\' && pi+1 < len(pat) && pat[pi+1] == '/')) {
					if pi < len(pat) && pat[pi] == '/' && dowild(pat, pi+1, text, pathname) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				}
			} else {
				pi++
			}
			if pi == len(pat) {
				if !matchSlash && strings.IndexByte(text, '/') >= 0 {
					return wmAbortToStarStar
				}
				return wmMatch
			}
			if !matchSlash && pat[pi] == '/' {
				// One star followed by a slash matches up to the next folder;
				// the loop step consumes both slashes.
				i := strings.IndexByte(text, '/')
				if i < 0 {
					return wmAbortAll
				}
				text = text[i:]
				continue
			}
			for len(text) > 0 {
				r := dowild(pat, pi, text, pathname)
				if r != wmNoMatch {
					if !matchSlash || r != wmAbortToStarStar {
						return r
					}
				} else if !matchSlash && text[0] == '/' {
					return wmAbortToStarStar
				}
				text = text[1:]
			}
			return wmAbortAll
		case '[':
			end, r := matchBracket(pat, pi, text[0], pathname)
			if r != wmMatch {
				return r
			}
			pi = end
		default:
			if text[0] != pc {
				return wmNoMatch
			}
		}
	}
	if len(text) == 0 {
		return wmMatch
	}
	return wmNoMatch
}

// matchBracket matches c against the bracket expression starting at pat[pi]
// == '['. It returns the index of the closing ']' and wmMatch, wmNoMatch, or
// wmAbortAll for a malformed expression. A "]" right after "[" or "[!" is a
// member; ranges and [:class:] names follow git.
func matchBracket(pat string, pi int, c byte, pathname bool) (int, int) {
	pi++
	if pi >= len(pat) {
		return pi, wmAbortAll
	}
	negated := false
	if pat[pi] == '!' || pat[pi] == '^' {
		negated = true
		pi++
	}
	matched := false
	var prev byte
	for first := true; first || pi < len(pat) && pat[pi] != ']'; first = false {
		if pi >= len(pat) {
			return pi, wmAbortAll
		}
		pc := pat[pi]
		switch {
		case pc == '\\':
			pi++
			if pi >= len(pat) {
				return pi, wmAbortAll
			}
			pc = pat[pi]
			if c == pc {
				matched = true
			}
		case pc == '-' && prev != 0 && pi+1 < len(pat) && pat[pi+1] != ']':
			pi++
			hi := pat[pi]
			if hi == '\\' {
				pi++
				if pi >= len(pat) {
					return pi, wmAbortAll
				}
				hi = pat[pi]
			}
			if prev <= c && c <= hi {
				matched = true
			}
			pc = 0
		case pc == '[' && pi+1 < len(pat) && pat[pi+1] == ':':
			s := pi + 2
			j := s
			for j < len(pat) && pat[j] != ']' {
				j++
			}
			if j >= len(pat) {
				return j, wmAbortAll
			}
			if j-s-1 < 0 || pat[j-1] != ':' {
				// No ":]": an ordinary "[" member.
				if c == '[' {
					matched = true
				}
				break
			}
			known, ok := classMatch(pat[s:j-1], c)
			if !known {
				return j, wmAbortAll
			}
			if ok {
				matched = true
			}
			pi = j
			pc = 0
		default:
			if c == pc {
				matched = true
			}
		}
		prev = pc
		pi++
	}
	if pi >= len(pat) {
		return pi, wmAbortAll
	}
	if matched == negated || pathname && c == '/' {
		return pi, wmNoMatch
	}
	return pi, wmMatch
}

func classMatch(class string, c byte) (known, ok bool) {
	switch class {
	case "alnum":
		return true, isAlpha(c) || isDigit(c)
	case "alpha":
		return true, isAlpha(c)
	case "blank":
		return true, c == ' ' || c == '\t'
	case "cntrl":
		return true, c < 0x20 || c == 0x7f
	case "digit":
		return true, isDigit(c)
	case "graph":
		return true, c > 0x20 && c < 0x7f
	case "lower":
		return true, c >= 'a' && c <= 'z'
	case "print":
		return true, c >= 0x20 && c < 0x7f
	case "punct":
		return true, c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c)
	case "space":
		return true, c == ' ' || (c >= '\t' && c <= '\r')
	case "upper":
		return true, c >= 'A' && c <= 'Z'
	case "xdigit":
		return true, isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
	}
	return false, false
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
