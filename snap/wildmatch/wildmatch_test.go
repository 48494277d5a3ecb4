package wildmatch

import "testing"

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pat, text string
		want      bool
	}{
		{"foo", "foo", true},
		{"foo", "bar", false},
		{"*.o", "a.o", true},
		{"*.o", "dir/a.o", false}, // star never crosses a slash
		{"?.c", "a.c", true},
		{"?.c", "ab.c", false},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/x/c", false},
		{"a/**/c", "a/c", true},
		{"a/**/c", "a/b/x/c", true},
		{"**/foo", "foo", true},
		{"**/foo", "x/y/foo", true},
		{"abc/**", "abc/x/y", true},
		{"abc/**", "abc", false},
		{"a**b", "axxb", true},
		{"a**b", "ax/xb", false}, // "**" not between slashes is a plain star
		{"[abc].txt", "b.txt", true},
		{"[!abc].txt", "b.txt", false},
		{"[^abc].txt", "d.txt", true},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[]]", "]", true},
		{"[!]]", "a", true},
		{"[[:digit:]]*", "7z", true},
		{"[[:alpha:]]", "7", false},
		{"[[:bogus:]]", "a", false},
		{"[abc", "a", false}, // unterminated: matches nothing
		{"\\*", "*", true},
		{"\\*", "a", false},
		{"a[/]b", "a/b", false},
		{"*", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		if got := Match(tt.pat, tt.text, true); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pat, tt.text, got, tt.want)
		}
	}
	// Without WM_PATHNAME (a pathspec without glob magic) every wildcard crosses slashes.
	plain := []struct {
		pat, text string
		want      bool
	}{
		{"*.o", "dir/a.o", true},
		{"a?b", "a/b", true},
		{"a[/]b", "a/b", true},
		{"a[!x]b", "a/b", true},
		{"a**b", "ax/xb", true},
		{"[[:alpha:]]*", "x/y", true},
		{"[[:digit:]]*", "x/y", false},
		{"?", "é", false}, // one byte, as git's wildmatch
		{"??", "é", true},
	}
	for _, tt := range plain {
		if got := Match(tt.pat, tt.text, false); got != tt.want {
			t.Errorf("Match(%q, %q) without pathname = %v, want %v", tt.pat, tt.text, got, tt.want)
		}
	}
}
