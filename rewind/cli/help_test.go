package cli

import (
	"slices"
	"strings"
	"testing"
)

// Every command says what it does and shows at least one way to run it.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands() {
		d := c.r.doc()
		if d.summary == "" || strings.HasSuffix(d.summary, ".") {
			t.Errorf("%s: summary %q: want one line without a period", c.name, d.summary)
		}
		if len(d.examples) == 0 {
			t.Errorf("%s: no example", c.name)
		}
		for _, ex := range d.examples {
			if !strings.Contains(ex, "rewind ") || !slices.Contains(strings.Fields(ex), c.name) {
				t.Errorf("%s: example %q does not run it", c.name, ex)
			}
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"list", "restore", "undo", "undo-restore", "redo", "show", "status", "statusline"}
	for _, tt := range []struct{ word, want string }{
		{"lsit", "list"},
		{"restroe", "restore"},
		{"undo-restor", "undo-restore"},
		{"stat", ""}, // status or statusline
		{"xyz", ""},
		{"s", ""},
		{"statu", "status"},
	} {
		if got := nearest(tt.word, names); got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
