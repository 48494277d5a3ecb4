package secrets

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// reach is how far a match of a rule's regex can reach from one of its
// keywords, which every match of a rule holds: its bounded parts are at
// most bounded characters long in all, and it has at most runs unbounded
// repeats, each a run of bytes of the set run. A match that holds a
// keyword at [ks, ke) lies in [back(ke), forth(ks)): a rule is tried only
// there, not on the whole fragment (see window).
type reach struct {
	bounded int
	runs    int
	run     [256]bool
}

// reachOf works out the reach of regex expr; false when it does not parse.
func reachOf(expr string) (reach, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return reach{}, false
	}
	var r reach
	r.bounded, r.runs = r.walk(re)
	return r, true
}

// walk returns the bounded length and the number of unbounded runs of re,
// adding the bytes of its unbounded repeats to r.run.
func (r *reach) walk(re *syntax.Regexp) (bounded, runs int) {
	switch re.Op {
	case syntax.OpLiteral:
		bounded = len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		bounded = 1
	case syntax.OpCapture, syntax.OpQuest:
		return r.walk(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			b, n := r.walk(sub)
			if re.Op == syntax.OpConcat {
				bounded, runs = bounded+b, runs+n
			} else {
				bounded, runs = max(bounded, b), max(runs, n)
			}
		}
	case syntax.OpStar, syntax.OpPlus:
		r.bytes(re.Sub[0])
		runs = 1
	case syntax.OpRepeat:
		if re.Max < 0 {
			r.bytes(re.Sub[0])
			return 0, 1
		}
		b, n := r.walk(re.Sub[0])
		bounded, runs = re.Max*b, re.Max*n
	}
	return bounded, runs
}

// bytes adds to r.run every byte re can match (any of a character's
// UTF-8 bytes past ASCII).
func (r *reach) bytes(re *syntax.Regexp) {
	add := func(lo, hi rune) {
		for c := lo; c <= min(hi, utf8.RuneSelf-1); c++ {
			r.run[c] = true
			if u := unicode.SimpleFold(c); u < utf8.RuneSelf {
				r.run[u] = true // (a folded literal's other case)
			}
		}
		if hi >= utf8.RuneSelf {
			for b := utf8.RuneSelf; b < 256; b++ {
				r.run[b] = true
			}
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			add(c, c)
		}
		if re.Flags&syntax.FoldCase != 0 {
			add(utf8.RuneSelf, utf8.RuneSelf) // (k and s fold to characters past ASCII)
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			add(re.Rune[i], re.Rune[i+1])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		add(0, unicode.MaxRune)
		r.run['\n'] = re.Op == syntax.OpAnyChar
	default:
		for _, sub := range re.Sub {
			r.bytes(sub)
		}
	}
}

// forth returns the end of the stretch a match holding a keyword that
// starts at ks can reach in b.
func (r *reach) forth(b []byte, ks int) int {
	e := ks
	for range r.runs {
		e = ahead(b, e, r.bounded)
		for e < len(b) && r.run[b[e]] {
			e++
		}
	}
	return ahead(b, e, r.bounded)
}

// back returns the start of the stretch a match holding a keyword that
// ends at ke can reach in b.
func (r *reach) back(b []byte, ke int) int {
	s := ke
	for range r.runs {
		s = behind(b, s, r.bounded)
		for s > 0 && r.run[b[s-1]] {
			s--
		}
	}
	return behind(b, s, r.bounded)
}

// ahead returns the offset n characters after i in b (its end at most).
func ahead(b []byte, i, n int) int {
	for ; n > 0 && i < len(b); n-- {
		if b[i] < utf8.RuneSelf {
			i++
		} else {
			_, w := utf8.DecodeRune(b[i:])
			i += w
		}
	}
	return i
}

// behind returns the offset n characters before i in b (0 at least).
func behind(b []byte, i, n int) int {
	for ; n > 0 && i > 0; n-- {
		if b[i-1] < utf8.RuneSelf {
			i--
		} else {
			_, w := utf8.DecodeLastRune(b[:i])
			i -= w
		}
	}
	return i
}
