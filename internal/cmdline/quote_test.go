package cmdline

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuotePath(t *testing.T) {
	for _, c := range []struct{ in, path, text string }{
		{"src/main.go", "src/main.go", "src/main.go"},
		{"", "", ""},
		{"with space.txt", "with space.txt", "with space.txt"},
		{"日本語/ファイル.txt", "日本語/ファイル.txt", "日本語/ファイル.txt"},
		{"café.md", "café.md", "café.md"},
		{"evil\x1b]0;pwned\x07.txt", `"evil\033]0;pwned\a.txt"`, `evil\033]0;pwned\a.txt`},
		{"fix the \x1b[2J bug", `"fix the \033[2J bug"`, `fix the \033[2J bug`},
		{"a\tb\nc\rd\ve\ff\bg", `"a\tb\nc\rd\ve\ff\bg"`, `a\tb\nc\rd\ve\ff\bg`},
		{"nul\x00del\x7f", `"nul\000del\177"`, `nul\000del\177`},
		{`say "hi"`, `"say \"hi\""`, `say "hi"`},
		{`back\slash`, `"back\\slash"`, `back\slash`},
		{"latin1-\xe9.txt", `"latin1-\351.txt"`, `latin1-\351.txt`},
		{"cut-\xe6\x97", `"cut-\346\227"`, `cut-\346\227`},
		{"c1-\u009b31m", `"c1-\302\23331m"`, `c1-\302\23331m`},
		{"next-line\u0085", `"next-line\302\205"`, `next-line\302\205`},
		{"invoice\u202efdp.exe", `"invoice\342\200\256fdp.exe"`, `invoice\342\200\256fdp.exe`},
		{"iso\u2066late\u2069", `"iso\342\201\246late\342\201\251"`, `iso\342\201\246late\342\201\251`},
		{"mark\u200e\u200f\u061c", `"mark\342\200\216\342\200\217\330\234"`, `mark\342\200\216\342\200\217\330\234`},
		{"line\u2028para\u2029", `"line\342\200\250para\342\200\251"`, `line\342\200\250para\342\200\251`},
		{"emoji 👨‍👩‍👧 \ufffd", "emoji 👨‍👩‍👧 \ufffd", "emoji 👨‍👩‍👧 \ufffd"}, // (a joiner and a U+FFFD that is written as such stay)
	} {
		if got := QuotePath(c.in); got != c.path {
			t.Errorf("QuotePath(%q) = %s, want %s", c.in, got, c.path)
		}
		if got := QuoteText(c.in); got != c.text {
			t.Errorf("QuoteText(%q) = %s, want %s", c.in, got, c.text)
		}
	}
}

// unquote reads a name QuotePath printed back, as C (and Go) read a string literal: what is
// not in quotes is the name itself.
func unquote(t *testing.T, q string) string {
	if !strings.HasPrefix(q, `"`) {
		return q
	}
	p, err := strconv.Unquote(q)
	if err != nil {
		t.Fatalf("unquote %s: %v", q, err)
	}
	return p
}

// shown reports what in s would reach a terminal raw: a byte below 0x20, DEL, bytes that are
// not UTF-8, or a rune hidden names.
func shown(s string) (bad string, ok bool) {
	if !utf8.ValidString(s) {
		return "not UTF-8", false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= utf8.RuneSelf && hidden(r) {
			return strconv.QuoteRune(r), false
		}
	}
	return "", true
}

func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a.txt", "evil\x1b]0;pwned\x07.txt", "\xff\xfe", "\u202e\u0085x", `"\`, "日本\n語", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, txt := QuotePath(s), QuoteText(s)
		for _, q := range []string{p, txt} {
			if bad, ok := shown(q); !ok {
				t.Fatalf("%q quoted as %q, which holds %s", s, q, bad)
			}
		}
		if back := unquote(t, p); back != s {
			t.Fatalf("QuotePath(%q) = %s reads back as %q", s, p, back)
		}
		if p != s && !strings.HasPrefix(p, `"`) {
			t.Fatalf("QuotePath(%q) = %s: changed but not quoted", s, p)
		}
		if QuoteText(txt) != txt || QuoteText(p) != p {
			t.Fatalf("QuoteText changed what was quoted already: %q, %q", txt, p)
		}
	})
}

// TestShellQuote: a word a shell reads as it is stays so; anything else is
// single-quoted, a quote inside it closed, escaped and opened again.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/.rewind": "/home/me/.rewind",
		"alice@host:x+y_z": "alice@host:x+y_z",
		"":                 "''",
		"my project":       "'my project'",
		"it's":             `'it'\''s'`,
		"$HOME;rm":         "'$HOME;rm'",
		"/a,b/100%":        "/a,b/100%",
		"/opt/x=y/hook":    "'/opt/x=y/hook'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
