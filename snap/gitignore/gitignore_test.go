package gitignore

import "testing"

func TestParsePattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		ok   bool
		want Pattern
	}{
		{"# comment", false, Pattern{}},
		{"", false, Pattern{}},
		{"\\#file", true, Pattern{glob: "\\#file"}},
		{"!keep.log", true, Pattern{glob: "keep.log", negate: true}},
		{"\\!bang", true, Pattern{glob: "\\!bang"}},
		{"build/", true, Pattern{glob: "build", dirOnly: true}},
		{"/root.txt", true, Pattern{glob: "root.txt", anchored: true}},
		{"a/b", true, Pattern{glob: "a/b", anchored: true}},
		{"trail   ", true, Pattern{glob: "trail"}},
		{"esc\\ ", true, Pattern{glob: "esc\\ "}},
		{"/", false, Pattern{}},
	}
	for _, tt := range tests {
		got, ok := parsePattern(tt.line)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parsePattern(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}
