// Package wildmatch matches paths against glob patterns as git's wildmatch.c
// does: the one glob engine under git's ignore rules and its pathspecs, so
// Rewind's gitignore and pathspec packages decide as git decides.
package wildmatch

import "strings"

// dowild's results, as in git's wildmatch.c: abortAll and abortToStarStar
// let a failed "*" stop trying further positions early.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// Match reports whether text matches the glob pat as git's wildmatch matches it. With
// pathname (git's WM_PATHNAME, as .gitignore and a pathspec's glob magic use it) "*", "?"
// and brackets never match "/", and "**" between slashes (or at either end) matches any
// number of folders; without it (a plain pathspec) "*" matches any run of bytes, slashes
// too, and "?" and brackets any byte. An unterminated bracket matches nothing.
func Match(pat, text string, pathname bool) bool { return dowild(pat, 0, text, pathname) == wmMatch }

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
