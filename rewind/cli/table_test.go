package cli

import (
	"regexp"
	"strings"
	"testing"
)

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Colour goes around a cell after it is padded: the columns line up the same
// with colours as without, and no escape code holds padding.
func TestTableColorAfterPadding(t *testing.T) {
	render := func(colors bool, width int) string {
		var out strings.Builder
		e := &env{stdout: &out, colors: colors}
		tb := &table{header: []string{"", "ID", "PROMPT"}, colors: []string{"", "33"}, flex: 2, rows: [][]string{
			{"@0", "20261122_143052_001", "fix the tests"},
			{"@10", "20261122_1430", "日本語のプロンプトはとても長いのでここで切られます"},
		}}
		if err := tb.write(e, width); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	plain, colored := render(false, 0), render(true, 0)
	if sgr.ReplaceAllString(colored, "") != plain {
		t.Errorf("colours moved the columns:\n%s\nvs\n%s", colored, plain)
	}
	if !strings.Contains(colored, "\x1b[33m20261122_1430\x1b[0m  ") {
		t.Errorf("want the id coloured, then its padding:\n%q", colored)
	}
	if !strings.Contains(colored, "\x1b[1mID\x1b[0m") {
		t.Errorf("want a bold header:\n%q", colored)
	}
	narrow := render(false, 40)
	for _, l := range strings.Split(strings.TrimSuffix(narrow, "\n"), "\n") {
		if w := textWidth(l); w > 40 {
			t.Errorf("line of %d cells in 40: %q", w, l)
		}
	}
	if !strings.Contains(narrow, "…") {
		t.Errorf("want the prompt cut with …:\n%s", narrow)
	}
}

func TestTextWidth(t *testing.T) {
	for s, want := range map[string]int{"abc": 3, "日本": 4, "e\u0301": 1, "📌 x": 4, "": 0} {
		if got := textWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, want %d", s, got, want)
		}
	}
	if got := cut("日本語です", 5); got != "日本…" {
		t.Errorf("cut = %q", got)
	}
}

// A cell from data is shown escaped, and measured and cut as it is shown.
func TestTableEscapesCells(t *testing.T) {
	var out strings.Builder
	tb := &table{header: []string{"ID", "PROMPT"}, flex: 1, rows: [][]string{{"a\x1b]0;x\x07", "fix the \x1b[2J bug"}}}
	if err := tb.write(&env{stdout: &out}, 0); err != nil {
		t.Fatal(err)
	}
	want := "ID           PROMPT\n" + `a\033]0;x\a  fix the \033[2J bug` + "\n"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
}
