package cmdline

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// QuotePath renders a file name for a person as git does: as it is, unless it holds a byte
// that acts on a terminal or hides text, a '"' or a '\', or bytes that are not UTF-8; then in
// double quotes, with C's escapes: \a \b \t \n \v \f \r \" \\, and \ooo (three octal digits)
// for every other such byte. A hostile name ("evil\x1b]0;pwned\x07.txt") then cannot retitle
// or clear the terminal that shows it, nor pass for another name.
//
// Letters of any script stay as they are (git's core.quotePath=false): people read their own
// names. The runes that act on a terminal or hide text are escaped all the same, as the octal
// of their UTF-8 bytes (what git's core.quotePath=true prints for them): the C1 controls
// (U+0080–U+009F, which terminals obey as they do ESC sequences), the bidirectional controls
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, which reorder what follows them), and
// the line and paragraph separators (U+2028, U+2029). So "\u202e" shows as "\342\200\256".
//
// The quoted form reads back byte for byte with C's (and Go's strconv.Unquote's) rules: two
// different names never look the same. --json output does not go through it: JSON escapes
// what it must, and a script gets the name exactly.
func QuotePath(p string) string {
	if !needsEscape(p, true) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 2)
	b.WriteByte('"')
	writeEscaped(&b, p, true)
	b.WriteByte('"')
	return b.String()
}

// QuoteText renders free text shown to a person (a prompt, a description, a pin label, a
// session's title, an error message) with QuotePath's escapes for the bytes and runes that act
// on a terminal or hide text, but without the quotes, and with '"' and '\' as they are: a
// prompt "fix the \x1b[2J bug" shows as fix the \033[2J bug. It is for reading, not reading
// back (a prompt may itself say \033); --json prints the text exactly.
//
// What QuoteText or QuotePath returned comes back unchanged from QuoteText: a line built from
// quoted paths can be passed through it again whole.
func QuoteText(s string) string {
	if !needsEscape(s, false) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	writeEscaped(&b, s, false)
	return b.String()
}

// needsEscape reports whether s holds a byte writeEscaped would escape.
func needsEscape(s string, path bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || path && (c == '"' || c == '\\') {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || hidden(r) {
			return true
		}
		i += n
	}
	return false
}

// writeEscaped writes s to b with the escapes QuotePath documents; with path, '"' and '\'
// are escaped too.
func writeEscaped(b *strings.Builder, s string, path bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case path && (c == '"' || c == '\\'):
				b.WriteByte('\\')
				b.WriteByte(c)
			case c >= 0x07 && c <= 0x0d:
				b.WriteByte('\\')
				b.WriteByte("abtnvfr"[c-0x07])
			case c < 0x20 || c == 0x7f:
				writeOctal(b, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || hidden(r) {
			for _, c := range []byte(s[i : i+n]) {
				writeOctal(b, c)
			}
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

func writeOctal(b *strings.Builder, c byte) {
	b.WriteByte('\\')
	b.WriteByte('0' + c>>6)
	b.WriteByte('0' + c>>3&7)
	b.WriteByte('0' + c&7)
}

// hidden reports whether r, a rune past ASCII, acts on a terminal or reorders or breaks the
// text around it: a C1 control, a bidirectional control, a line or paragraph separator.
func hidden(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// ShellQuote quotes s for a POSIX shell when it needs it: as it is when it
// holds only letters, digits and /._-+:,@%, else in single quotes. "=" is
// quoted: a first word holding one is an assignment, not a command.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
