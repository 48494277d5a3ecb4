// Command benchplot draws scripts/bench's scale curve as an SVG, from the
// TSV the scale section writes: one row per tree size with the no-op and
// one-change checkpoint and `git status --porcelain` times (seconds) and
// their peak RSS (MiB). The upper chart is time against files, both axes
// logarithmic (a cost proportional to the tree is a straight line of slope
// one); the lower is peak RSS against files, with the 100 MiB bound.
// Standard library only; the SVG goes to stdout.
//
//	benchplot < curve.tsv > docs/scale.svg
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchplot:", err)
		os.Exit(1)
	}
}

// point is one tree size's figures.
type point struct {
	files float64
	secs  [3]float64 // no-op, one change, git status
	rss   [3]float64
}

var (
	names  = [3]string{"no-op checkpoint", "one-change checkpoint", "git status --porcelain"}
	colors = [3]string{"#1f77b4", "#d62728", "#555555"}
)

// The TSV's columns, after a header line.
const header = "files\tnoop_s\tone_s\tgit_s\tnoop_rss_mib\tone_rss_mib\tgit_rss_mib"

func parse(r io.Reader) ([]point, error) {
	var pts []point
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if n == 1 {
			if line != header {
				return nil, fmt.Errorf("line 1: want the header %q", header)
			}
			continue
		}
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			return nil, fmt.Errorf("line %d: %d fields, want 7", n, len(f))
		}
		var v [7]float64
		for i, s := range f {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || x <= 0 {
				return nil, fmt.Errorf("line %d: field %d: %q is not a positive number", n, i+1, s)
			}
			v[i] = x
		}
		pts = append(pts, point{files: v[0], secs: [3]float64{v[1], v[2], v[3]}, rss: [3]float64{v[4], v[5], v[6]}})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(pts) < 2 {
		return nil, fmt.Errorf("%d rows, want at least 2", len(pts))
	}
	return pts, nil
}

func run(in io.Reader, out io.Writer) error {
	pts, err := parse(in)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	const width, height = 720, 640
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	c := chart{x: 80, y: 40, w: 600, h: 320, title: "Time against tree size (log–log)", ylabel: "seconds", logY: true}
	c.draw(w, pts, func(p point) [3]float64 { return p.secs })
	c = chart{x: 80, y: 440, w: 600, h: 150, title: "Peak RSS", ylabel: "MiB", bound: 100}
	c.draw(w, pts, func(p point) [3]float64 { return p.rss })
	fmt.Fprintln(w, "</svg>")
	return w.Flush()
}

// chart is one plot area: x is always files on a log scale.
type chart struct {
	x, y, w, h float64
	title      string
	ylabel     string
	logY       bool
	bound      float64 // a horizontal line at this value (dashed), if not 0
}

func (c chart) draw(w io.Writer, pts []point, get func(point) [3]float64) {
	xmin, xmax := decades(pts[0].files, pts[len(pts)-1].files)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		for _, v := range get(p) {
			ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
		}
	}
	if c.bound > 0 {
		ymax = math.Max(ymax, c.bound)
	}
	if c.logY {
		ymin, ymax = decades(ymin, ymax)
	} else {
		ymin, ymax = 0, niceCeil(ymax*1.1)
	}
	px := func(v float64) float64 {
		return c.x + c.w*(math.Log10(v)-math.Log10(xmin))/(math.Log10(xmax)-math.Log10(xmin))
	}
	py := func(v float64) float64 {
		if c.logY {
			return c.y + c.h - c.h*(math.Log10(v)-math.Log10(ymin))/(math.Log10(ymax)-math.Log10(ymin))
		}
		return c.y + c.h - c.h*(v-ymin)/(ymax-ymin)
	}
	fmt.Fprintf(w, `<text x="%g" y="%g" font-size="14" font-weight="bold">%s</text>`+"\n", c.x, c.y-12, c.title)
	fmt.Fprintf(w, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`+"\n", c.x, c.y, c.w, c.h)
	// x ticks: every power of ten, and the measured sizes.
	for v := xmin; v <= xmax*1.0001; v *= 10 {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#eee"/>`+"\n", px(v), c.y, px(v), c.y+c.h)
	}
	for _, p := range pts {
		fmt.Fprintf(w, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", px(p.files), c.y+c.h+16, count(p.files))
	}
	fmt.Fprintf(w, `<text x="%g" y="%g" text-anchor="middle">files</text>`+"\n", c.x+c.w/2, c.y+c.h+32)
	// y ticks.
	var ticks []float64
	if c.logY {
		for v := ymin; v <= ymax*1.0001; v *= 10 {
			ticks = append(ticks, v)
		}
	} else {
		for i := 0; i <= 4; i++ {
			ticks = append(ticks, ymin+(ymax-ymin)*float64(i)/4)
		}
	}
	for _, v := range ticks {
		fmt.Fprintf(w, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#eee"/>`+"\n", c.x, py(v), c.x+c.w, py(v))
		fmt.Fprintf(w, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", c.x-6, py(v)+4, strconv.FormatFloat(v, 'g', 3, 64))
	}
	fmt.Fprintf(w, `<text x="%g" y="%g" text-anchor="middle" transform="rotate(-90 %g %g)">%s</text>`+"\n", c.x-52, c.y+c.h/2, c.x-52, c.y+c.h/2, c.ylabel)
	if c.bound > 0 {
		fmt.Fprintf(w, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#d62728" stroke-dasharray="6 4"/>`+"\n", c.x, py(c.bound), c.x+c.w, py(c.bound))
		fmt.Fprintf(w, `<text x="%g" y="%.1f" text-anchor="end" fill="#d62728">bound %g %s</text>`+"\n", c.x+c.w-4, py(c.bound)-4, c.bound, c.ylabel)
	}
	for s := range names {
		var b strings.Builder
		for i, p := range pts {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", px(p.files), py(get(p)[s]))
		}
		fmt.Fprintf(w, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", b.String(), colors[s])
		for _, p := range pts {
			fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(p.files), py(get(p)[s]), colors[s])
		}
		fmt.Fprintf(w, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"/>`+"\n", c.x+10, c.y+16+float64(s)*16, c.x+30, c.y+16+float64(s)*16, colors[s])
		fmt.Fprintf(w, `<text x="%g" y="%g">%s</text>`+"\n", c.x+36, c.y+20+float64(s)*16, names[s])
	}
}

// decades widens [lo, hi] to whole powers of ten.
func decades(lo, hi float64) (float64, float64) {
	return math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// count writes a file count as 10k, 230k, 1M.
func count(n float64) string {
	switch {
	case n >= 1e6:
		return strconv.FormatFloat(n/1e6, 'g', 3, 64) + "M"
	case n >= 1e3:
		return strconv.FormatFloat(math.Round(n/1e3), 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(n, 'g', 4, 64)
}
