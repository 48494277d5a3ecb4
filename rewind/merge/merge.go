// Package merge is a line-based three-way merge of text (diff3), as git
// merge-file makes it: the changes from a base to two versions, ours and
// theirs, are combined; where both change the same or touching lines
// differently, the result holds a conflict between git-style markers.
//
// Like git's default (the "zealous, alnum" level), changes both sides made
// alike are taken once, a conflicting region is narrowed to the lines its two
// sides really differ in, and conflicts separated by at most three lines, or
// only by lines without a letter or digit, are joined. Lines keep their
// endings; a side whose last line has none gets one before a marker, as CRLF
// where the text around it uses CRLF.
package merge

import "bytes"

// Labels name the two sides in the conflict markers ("<<<<<<< Ours" and
// ">>>>>>> Theirs"); an empty label leaves the marker bare.
type Labels struct {
	Ours, Theirs string
}

// Result is a merge's text, with markers where it conflicts, and how many
// conflicting regions it holds.
type Result struct {
	Text      []byte
	Conflicts int
}

// BinarySniff is how many leading bytes Binary looks at, as git does.
const BinarySniff = 8000

// Binary reports whether b looks like binary data: a NUL byte in its first
// BinarySniff bytes (git's rule). Binary content is never merged line by
// line.
func Binary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), BinarySniff)], 0) >= 0
}

// Text merges the change from base to theirs into ours.
func Text(base, ours, theirs []byte, l Labels) Result {
	in := newInterner()
	b0, b1, b2 := lines(base), lines(ours), lines(theirs)
	x0, x1, x2 := in.ids(b0), in.ids(b1), in.ids(b2)
	d1, d2 := diff(x0, x1), diff(x0, x2)
	switch {
	case len(d1) == 0:
		return Result{Text: bytes.Clone(theirs)}
	case len(d2) == 0:
		return Result{Text: bytes.Clone(ours)}
	}
	m := &merger{base: b0, ours: b1, theirs: b2, x1: x1, x2: x2}
	m.combine(d1, d2)
	m.refine()
	m.simplify()
	return m.output(l)
}

// lines splits b after each newline; the last line may lack one.
func lines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// interner gives equal lines equal numbers, so diffs compare ints.
type interner map[string]int

func newInterner() interner { return interner{} }

func (in interner) ids(ls [][]byte) []int {
	out := make([]int, len(ls))
	for i, l := range ls {
		id, ok := in[string(l)]
		if !ok {
			id = len(in)
			in[string(l)] = id
		}
		out[i] = id
	}
	return out
}

// A region of the merge: lines [i1, i1+c1) of ours and [i2, i2+c2) of
// theirs, over lines [i0, i0+c0) of the base.
type region struct {
	mode           mode
	i0, c0, i1, c1 int
	i2, c2         int
}

type mode int

const (
	conflict   mode = iota
	takeOurs        // only ours changed these lines
	takeTheirs      // only theirs changed these lines
	same            // both changed them alike: ours holds the result
)

type merger struct {
	base, ours, theirs [][]byte
	x1, x2             []int
	regions            []region
}

// add appends a region, joining it to the previous one when they overlap
// or touch in either side (the joined region conflicts unless both are of
// one mode).
func (m *merger) add(r region) {
	if n := len(m.regions); n > 0 {
		p := &m.regions[n-1]
		if r.i1 <= p.i1+p.c1 || r.i2 <= p.i2+p.c2 {
			if r.mode != p.mode {
				p.mode = conflict
			}
			p.c0 = r.i0 + r.c0 - p.i0
			p.c1 = r.i1 + r.c1 - p.i1
			p.c2 = r.i2 + r.c2 - p.i2
			return
		}
	}
	m.regions = append(m.regions, r)
}

// combine walks the two lists of changes from the base in step. A change of
// one side that ends before the other's next change begins (a line apart at
// least) is taken as it is; changes that overlap or touch conflict, unless
// they are the same change.
func (m *merger) combine(d1, d2 []hunk) {
	delta1 := len(m.ours) - len(m.base)
	delta2 := len(m.theirs) - len(m.base)
	i, j := 0, 0
	for i < len(d1) && j < len(d2) {
		h1, h2 := d1[i], d2[j]
		switch {
		case h1.a1 < h2.a0:
			m.add(region{mode: takeOurs, i0: h1.a0, c0: h1.a1 - h1.a0, i1: h1.b0, c1: h1.b1 - h1.b0,
				i2: h2.b0 - h2.a0 + h1.a0, c2: h1.a1 - h1.a0})
			i++
			continue
		case h2.a1 < h1.a0:
			m.add(region{mode: takeTheirs, i0: h2.a0, c0: h2.a1 - h2.a0, i1: h1.b0 - h1.a0 + h2.a0, c1: h2.a1 - h2.a0,
				i2: h2.b0, c2: h2.b1 - h2.b0})
			j++
			continue
		}
		if !m.sameChange(h1, h2) {
			// The union of the two changes, in each side's lines.
			i0, i1, i2 := h1.a0, h1.b0, h2.b0
			if off := h1.a0 - h2.a0; off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			c0, c1, c2 := h1.a1-i0, h1.b1-i1, h2.b1-i2
			if ffo := (h1.a0 - h2.a0) + (h1.a1 - h1.a0) - (h2.a1 - h2.a0); ffo < 0 {
				c0 -= ffo
				c1 -= ffo
			} else {
				c2 += ffo
			}
			m.add(region{mode: conflict, i0: i0, c0: c0, i1: i1, c1: c1, i2: i2, c2: c2})
		}
		e1, e2 := h1.a1, h2.a1
		if e1 >= e2 {
			j++
		}
		if e2 >= e1 {
			i++
		}
	}
	for ; i < len(d1); i++ {
		h := d1[i]
		m.add(region{mode: takeOurs, i0: h.a0, c0: h.a1 - h.a0, i1: h.b0, c1: h.b1 - h.b0, i2: h.a0 + delta2, c2: h.a1 - h.a0})
	}
	for ; j < len(d2); j++ {
		h := d2[j]
		m.add(region{mode: takeTheirs, i0: h.a0, c0: h.a1 - h.a0, i1: h.a0 + delta1, c1: h.a1 - h.a0, i2: h.b0, c2: h.b1 - h.b0})
	}
}

// sameChange reports whether two changes replace the same base lines with
// the same lines.
func (m *merger) sameChange(h1, h2 hunk) bool {
	if h1.a0 != h2.a0 || h1.a1 != h2.a1 || h1.b1-h1.b0 != h2.b1-h2.b0 {
		return false
	}
	for k := 0; k < h1.b1-h1.b0; k++ {
		if !bytes.Equal(m.ours[h1.b0+k], m.theirs[h2.b0+k]) {
			return false
		}
	}
	return true
}

// refine narrows each conflict to the lines in which its two sides differ:
// a diff of ours against theirs splits it into smaller conflicts, and one
// whose sides are equal is no conflict at all.
func (m *merger) refine() {
	var out []region
	for _, r := range m.regions {
		if r.mode != conflict || r.c1 == 0 || r.c2 == 0 {
			out = append(out, r)
			continue
		}
		hs := diff(m.ids(m.ours[r.i1:r.i1+r.c1]), m.ids(m.theirs[r.i2:r.i2+r.c2]))
		if len(hs) == 0 {
			r.mode = same
			out = append(out, r)
			continue
		}
		for _, h := range hs {
			out = append(out, region{mode: conflict, i0: r.i0, c0: r.c0,
				i1: r.i1 + h.a0, c1: h.a1 - h.a0, i2: r.i2 + h.b0, c2: h.b1 - h.b0})
		}
	}
	m.regions = out
}

// ids are lines as diff compares them.
func (m *merger) ids(ls [][]byte) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return out
}

// simplify joins two conflicts when the lines of ours between them are few
// (three at most) or hold no letter or digit: one larger conflict reads
// more easily than two with a brace between them.
func (m *merger) simplify() {
	if len(m.regions) == 0 {
		return
	}
	out := []region{m.regions[0]}
	for _, n := range m.regions[1:] {
		p := &out[len(out)-1]
		begin, end := p.i1+p.c1, n.i1
		if p.mode != conflict || n.mode != conflict || (end-begin > 3 && anyAlnum(m.ours[begin:end])) {
			out = append(out, n)
			continue
		}
		p.c0 = n.i0 + n.c0 - p.i0
		p.c1 = n.i1 + n.c1 - p.i1
		p.c2 = n.i2 + n.c2 - p.i2
	}
	m.regions = out
}

func anyAlnum(ls [][]byte) bool {
	for _, l := range ls {
		for _, c := range l {
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return true
			}
		}
	}
	return false
}

// output writes ours with theirs's changes in, and each conflict between
// markers.
func (m *merger) output(l Labels) Result {
	var res Result
	var b bytes.Buffer
	i := 0 // the next line of ours not written yet
	for _, r := range m.regions {
		switch r.mode {
		case conflict:
			res.Conflicts++
			writeLines(&b, m.ours[i:r.i1], "")
			eol := "\n"
			if m.crlf(r) {
				eol = "\r\n"
			}
			marker(&b, "<<<<<<<", l.Ours, eol)
			writeLines(&b, m.ours[r.i1:r.i1+r.c1], eol)
			marker(&b, "=======", "", eol)
			writeLines(&b, m.theirs[r.i2:r.i2+r.c2], eol)
			marker(&b, ">>>>>>>", l.Theirs, eol)
		case takeOurs:
			writeLines(&b, m.ours[i:r.i1+r.c1], "")
		case takeTheirs:
			writeLines(&b, m.ours[i:r.i1], "")
			writeLines(&b, m.theirs[r.i2:r.i2+r.c2], "")
		default:
			continue
		}
		i = r.i1 + r.c1
	}
	writeLines(&b, m.ours[i:], "")
	res.Text = b.Bytes()
	return res
}

// writeLines writes ls; with eol set, a last line without an ending gets eol.
func writeLines(b *bytes.Buffer, ls [][]byte, eol string) {
	for _, l := range ls {
		b.Write(l)
	}
	if n := len(ls); eol != "" && n > 0 && !bytes.HasSuffix(ls[n-1], []byte("\n")) {
		b.WriteString(eol)
	}
}

func marker(b *bytes.Buffer, m, label, eol string) {
	b.WriteString(m)
	if label != "" {
		b.WriteString(" " + label)
	}
	b.WriteString(eol)
}

// crlf reports whether a conflict's markers end in CRLF, as git decides it:
// the line before the conflict in ours, then in theirs (or their first
// lines), then the base's first line are asked in turn; the first that ends
// in LF alone says no, and the base's has the last word.
func (m *merger) crlf(r region) bool {
	v := crlfAt(m.ours, max(r.i1-1, 0))
	if v != no {
		v = crlfAt(m.theirs, max(r.i2-1, 0))
	}
	if v != no {
		v = crlfAt(m.base, 0)
	}
	return v == yes
}

type tri int

const (
	unknown tri = iota
	no
	yes
)

// crlfAt tells whether line i of ls ends in CRLF; the last line, without
// an ending, is judged by the line before it.
func crlfAt(ls [][]byte, i int) tri {
	isCRLF := func(l []byte) tri {
		if bytes.HasSuffix(l, []byte("\r\n")) {
			return yes
		}
		return no
	}
	switch {
	case len(ls) == 0:
		return unknown
	case i < len(ls)-1 || bytes.HasSuffix(ls[i], []byte("\n")):
		return isCRLF(ls[i])
	case i == 0:
		return unknown
	}
	return isCRLF(ls[i-1])
}
