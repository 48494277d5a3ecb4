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

// TestExcludes: a path is excluded by its own pattern or by a folder above
// it, and a later "!" pattern takes a path back (not one under an excluded
// folder: git does not look inside it).
func TestExcludes(t *testing.T) {
	l := Lines([]string{"secrets/", "*.env", "!keep.env", "/build"})
	for _, c := range []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"secrets", true, true},
		{"secrets", false, false},
		{"secrets/a.txt", false, true},
		{"app/secrets/key", false, true},
		{"prod.env", false, true},
		{"keep.env", false, false},
		{"secrets/keep.env", false, true},
		{"build/out", false, true},
		{"src/build/out", false, false},
		{"readme.md", false, false},
	} {
		if got := l.Excludes(c.path, c.isDir); got != c.want {
			t.Errorf("Excludes(%q, dir=%v) = %v, want %v", c.path, c.isDir, got, c.want)
		}
	}
	var none *List
	if none.Excludes("a", false) {
		t.Error("a nil list excludes a path")
	}
}
