package cli

import (
	"io"
	"strings"
	"unicode"

	"rewind.dev/internal/cmdline"
)

// table lays out rows in columns padded by display width, then colours
// cells (so escape codes never count as width), and fits the terminal: the
// flexible column is cut with "…" to what the width leaves it. Every cell is
// shown through cmdline.QuoteText, since prompts, titles and agents come
// from data; a path goes in quoted already (cmdline.QuotePath), which
// QuoteText leaves as it is.
type table struct {
	header []string
	rows   [][]string
	colors []string // per column, an SGR code such as "33"; "" for none
	flex   int      // the column that gives way to the width; -1 for none
	// optional columns are left out, in this order, while the flexible
	// column would get fewer than wantFlex cells.
	optional []int
}

// wantFlex is the width the flexible column should keep, leaving optional
// columns out for it; minFlex the narrowest it is ever cut to, even when the
// line then overflows the terminal.
const (
	wantFlex = 30
	minFlex  = 12
)

// write prints t to e.stdout, fitted to width (0: no limit).
func (t *table) write(e *env, width int) error {
	t = t.escaped()
	keep := make([]bool, len(t.header))
	for i := range keep {
		keep[i] = true
	}
	w := t.widths()
	const gap = 2
	// avail is what the flexible column gets beside the kept others.
	avail := func() int {
		used := -gap
		for i := range w {
			if keep[i] {
				used += gap
				if i != t.flex {
					used += w[i]
				}
			}
		}
		return width - used
	}
	if width > 0 && t.flex >= 0 {
		for _, o := range t.optional {
			if avail() >= min(wantFlex, w[t.flex]) {
				break
			}
			keep[o] = false
		}
		w[t.flex] = min(w[t.flex], max(avail(), minFlex))
	}
	t, w = t.only(keep, w)
	cols := len(t.header)
	var b strings.Builder
	line := func(r []string, header bool) {
		var l strings.Builder
		for i, c := range r {
			if textWidth(c) > w[i] {
				c = cut(c, w[i])
			}
			pad := ""
			if i < cols-1 {
				pad = strings.Repeat(" ", w[i]-textWidth(c)+gap)
			}
			code := ""
			if header {
				code = "1"
			} else if i < len(t.colors) {
				code = t.colors[i]
			}
			if c != "" {
				c = e.color(code, c)
			}
			l.WriteString(c + pad)
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	line(t.header, true)
	for _, r := range t.rows {
		line(r, false)
	}
	_, err := io.WriteString(e.stdout, b.String())
	return err
}

// textWidth is how many terminal cells s takes: wide (East Asian, emoji)
// runes two, combining marks none.
func textWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\u200d':
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// cut shortens s to at most n cells, ending in "…" when it cut.
func cut(s string, n int) string {
	if textWidth(s) <= n {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		rw := runeWidth(r)
		if used+rw > n-1 {
			break
		}
		b.WriteRune(r)
		used += rw
	}
	return b.String() + "…"
}

// escaped is t with its cells shown through cmdline.QuoteText, before they
// are measured and cut.
func (t *table) escaped() *table {
	out := *t
	out.rows = make([][]string, len(t.rows))
	for i, r := range t.rows {
		out.rows[i] = make([]string, len(r))
		for j, c := range r {
			out.rows[i][j] = cmdline.QuoteText(c)
		}
	}
	return &out
}

// widths is each column's widest cell.
func (t *table) widths() []int {
	w := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			w[i] = max(w[i], textWidth(c))
		}
	}
	return w
}

// only is t with the kept columns only, and their widths.
func (t *table) only(keep []bool, w []int) (*table, []int) {
	pick := func(r []string) []string {
		var out []string
		for i, c := range r {
			if keep[i] {
				out = append(out, c)
			}
		}
		return out
	}
	out := &table{header: pick(t.header), flex: -1}
	var widths []int
	for i := range keep {
		if !keep[i] {
			continue
		}
		if i == t.flex {
			out.flex = len(widths)
		}
		widths = append(widths, w[i])
		c := ""
		if i < len(t.colors) {
			c = t.colors[i]
		}
		out.colors = append(out.colors, c)
	}
	for _, r := range t.rows {
		out.rows = append(out.rows, pick(r))
	}
	return out, widths
}
