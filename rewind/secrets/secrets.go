// Package secrets finds secrets in text — cloud keys, private keys, API
// tokens — by gitleaks' default rule set, and masks them.
//
// The rules are gitleaks' own (github.com/zricethezav/gitleaks/v8, its
// config package), loaded once, when first used. The matching is written
// here, after gitleaks' detector, which is not linked: its start-up cost
// would be paid by every run of rewind. Kept from the detector: a rule with
// keywords is tried only where one of them appears (in lowercase text); the
// secret is the rule's secret group, else the regex's first group that
// matched something, else the whole match, found by matching the regex
// again on the match alone; a rule with an entropy threshold reports only
// secrets of higher Shannon entropy; the global and the rule's allowlists
// (regexes against the secret, the match or the line, stop words, paths;
// OR and AND conditions) let a finding pass; a rule with a path regex only
// applies to files whose path it matches, and one with nothing but a path
// reports the file itself; a line marked gitleaks:allow is passed; a generic
// rule's finding gives way to a specific rule's on the same line that holds
// its secret. Left out: the decoding passes (base64, hex and percent-encoded
// text are not decoded and scanned again), composite rules (with required
// rules) and rules that only serve them (skipReport) — the default set has
// none — and commits, baselines and .gitleaksignore, which belong to git
// histories.
//
// Text is scanned in fragments of about 128 KiB, cut after a line where one
// ends near the cut, each seen with the 16 KiB after it, so that a secret
// longer than that overlap which starts just before a cut is the one
// missed; the detector, too, reads files in pieces. The fragments of a scan
// are matched on as many processors as there are. Within a fragment, a
// rule with keywords is tried only around them, as far as a match holding
// one can reach (worked out from its regex: see reach): Go's regexp works
// through every byte it is given at a cost, and most of a fragment is far
// from any keyword. A match that holds none of its rule's keywords, which
// the detector would find where one stood elsewhere in its piece, is
// passed by.
//
// Scanning costs about 10 to 15 MB/s of source code and 2 to 3 MB/s of an
// agent's transcript, dense with the generic rule's keywords (key, token,
// auth, …), on one core (go test -bench Scan).
package secrets

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Finding is a secret found.
type Finding struct {
	Rule string // the gitleaks rule that found it, e.g. "aws-access-token"
	Path string // the file it is in, as Scan was given it
	// Line is the line its first byte is on, counted from 1; Start and End
	// are its bytes' offsets in what was scanned: content[Start:End]. A
	// rule that reports a file by its path alone reports Line 0 and no bytes.
	Line       int
	Start, End int64
}

// Scan returns the secrets in content, in the order of their offsets.
// path names the file content is, slash-separated and relative to its
// tree, for the rules and allowlists that look at paths; "" for text of no
// file (a transcript). Scan(path, nil) checks the path alone.
func Scan(path string, content []byte) []Finding {
	var out []Finding
	s := newScanner(path, func(f Finding) error { out = append(out, f); return nil })
	if s == nil {
		return nil
	}
	s.pathFindings()
	s.scan(content, false)
	return out
}

// ScanReader scans the bytes r reads as Scan scans content, a piece at a
// time, calling fn with each finding in order; an error fn returns stops
// the scan and is returned.
func ScanReader(ctx context.Context, path string, r io.Reader, fn func(Finding) error) error {
	s := newScanner(path, fn)
	if s == nil {
		return nil
	}
	if err := s.pathFindings(); err != nil {
		return err
	}
	buf := make([]byte, readSize)
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := io.ReadFull(r, buf[n:])
		n += m
		more := err == nil
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return err
		}
		used := s.scan(buf[:n], more)
		if s.err != nil {
			return s.err
		}
		if !more {
			return nil
		}
		n = copy(buf, buf[used:n])
		s.base += int64(used)
	}
}

// Fragments: each is scanned with the overlap after it, and keeps the
// matches that start in it. A cut is made after the last line break in
// the second half of fragSize, or at fragSize in a longer line.
const (
	fragSize = 128 << 10
	overlap  = 16 << 10
	readSize = 1 << 20 // what ScanReader holds (more than a fragment and its overlap)
)

// scanner scans one file (or stream) fragment by fragment.
type scanner struct {
	rs    *ruleSet
	path  string
	emit  func(Finding) error
	err   error  // what emit returned, which stops the scan
	tried []bool // the rules that apply to path
	base  int64  // the offset of the data scan is given
	// Lines: line is the number of the line offset linePos is on.
	linePos  int64
	line     int
	lastEnd  []int64 // for each rule, the end of the last secret it found
	matchers []*matcher
	frags    []fragment
	found    []found // the fragment's, as it is reported
	whole    bool    // try every rule on whole fragments (for tests: see window)
}

// fragment is data[from:end] of a scan, which keeps the matches that start
// before cut; found are they.
type fragment struct {
	from, cut, end int
	found          []found
}

// matcher finds the matches in one fragment at a time: the scanner's
// matchers work on as many fragments at once.
type matcher struct {
	s       *scanner
	lower   []byte
	hit     []bool // the keywords the fragment holds
	hits    []hit  // where, in order
	windows [][2]int
}

// hit is a keyword found in a fragment, at [start, end).
type hit struct{ start, end, keyword int }

// found is a finding and the number of its rule.
type found struct {
	Finding
	rule int
}

// newScanner returns a scanner of the file at path, nil when the global
// allowlist leaves it unscanned.
func newScanner(path string, emit func(Finding) error) *scanner {
	rs := rules()
	if pathAllowed(path, rs.allow) {
		return nil
	}
	s := &scanner{rs: rs, path: path, emit: emit, tried: make([]bool, len(rs.rules)), line: 1,
		lastEnd: make([]int64, len(rs.rules))}
	for i, r := range rs.rules {
		s.tried[i] = r.Regex != nil && !pathAllowed(path, r.Allowlists) && (r.Path == nil || r.Path.MatchString(path))
	}
	return s
}

// pathFindings reports the file for each rule that has a path regex and no
// other, and matches its path.
func (s *scanner) pathFindings() error {
	if s.path == "" {
		return nil
	}
	for _, r := range s.rs.rules {
		if r.Regex == nil && r.Path != nil && !pathAllowed(s.path, r.Allowlists) && r.Path.MatchString(s.path) {
			if err := s.emit(Finding{Rule: r.RuleID, Path: s.path}); err != nil {
				return err
			}
		}
	}
	return nil
}

// scan scans data, the bytes at s.base, fragment by fragment. With more
// (more bytes follow data), it stops before the first fragment whose
// overlap data does not hold whole; it returns how many bytes it is done
// with.
func (s *scanner) scan(data []byte, more bool) int {
	s.frags = s.frags[:0]
	p := 0
	for p < len(data) {
		cut := len(data)
		if len(data)-p > fragSize {
			cut = p + fragSize
			if i := bytes.LastIndexByte(data[p+fragSize/2:p+fragSize], '\n'); i >= 0 {
				cut = p + fragSize/2 + i + 1
			}
		}
		end := min(cut+overlap, len(data))
		if more && (cut == len(data) || end < cut+overlap) {
			break
		}
		var reuse []found // (the findings slice a fragment before had here)
		if len(s.frags) < cap(s.frags) {
			reuse = s.frags[:len(s.frags)+1][len(s.frags)].found[:0]
		}
		s.frags = append(s.frags, fragment{from: p, cut: cut, end: end, found: reuse})
		p = cut
	}
	s.match(data)
	for i := range s.frags {
		if s.report(data, &s.frags[i]); s.err != nil {
			break
		}
	}
	s.countLines(data, int64(p)+s.base)
	return p
}

// match finds the matches of every fragment, on as many at once as there
// are processors.
func (s *scanner) match(data []byte) {
	n := min(runtime.GOMAXPROCS(0), len(s.frags))
	for len(s.matchers) < n {
		s.matchers = append(s.matchers, &matcher{s: s, hit: make([]bool, len(s.rs.keywords))})
	}
	if n <= 1 {
		for i := range s.frags {
			s.matchers[0].match(data, &s.frags[i])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, m := range s.matchers[:n] {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(s.frags); i = int(next.Add(1) - 1) {
				m.match(data, &s.frags[i])
			}
		})
	}
	wg.Wait()
}

// report hands on the findings of fragment f, in the order of their
// offsets, but for one found already from the fragment before and a
// generic one a specific one overrules.
func (s *scanner) report(data []byte, f *fragment) {
	slices.SortStableFunc(f.found, func(a, b found) int { return cmp.Compare(a.Start, b.Start) })
	s.found = s.found[:0]
	for _, x := range f.found {
		x.Start += int64(f.from) + s.base
		x.End += int64(f.from) + s.base
		if x.Start < s.lastEnd[x.rule] {
			continue // found already, from the fragment before
		}
		s.lastEnd[x.rule] = x.End
		x.Line = s.lineOf(data, x.Start)
		s.found = append(s.found, x)
	}
	for _, x := range s.found {
		if s.rs.rules[x.rule].generic && s.overruled(data, x) {
			continue
		}
		if s.err = s.emit(x.Finding); s.err != nil {
			return
		}
	}
}

// match finds the matches in fragment f of data (offsets in the fragment).
func (m *matcher) match(data []byte, f *fragment) {
	frag := data[f.from:f.end]
	m.lower = m.lower[:0]
	for _, c := range frag {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		m.lower = append(m.lower, c)
	}
	clear(m.hit)
	m.hits = m.hits[:0]
	m.s.rs.trie.Walk(m.lower, func(end, n, k int64) bool {
		m.hit[k] = true
		m.hits = append(m.hits, hit{int(end - n + 1), int(end + 1), int(k)})
		return true
	})
	for i := range m.s.rs.rules {
		r := &m.s.rs.rules[i]
		if !m.s.tried[i] || !m.anyHit(r.keywords) {
			continue
		}
		for _, w := range m.window(r, frag) {
			for _, x := range r.Regex.FindAllIndex(frag[w[0]:w[1]], -1) {
				if w[0]+x[0] >= f.cut-f.from {
					break
				}
				if fd, ok := m.s.check(r, frag, w[0]+x[0], w[0]+x[1]); ok {
					f.found = append(f.found, found{fd, i})
				}
			}
		}
	}
}

// window returns the stretches of frag rule r is tried on: the whole
// fragment, or for a rule whose reach is known, the stretches around its
// keywords that a match holding one can reach (each widened to whole
// words at its ends, for \b), merged. gitleaks tries a rule on any text
// that holds one of its keywords anywhere; a match that holds none of its
// rule's keywords is the one this passes by.
func (m *matcher) window(r *rule, frag []byte) [][2]int {
	m.windows = m.windows[:0]
	if !r.windowed || m.s.whole {
		return append(m.windows, [2]int{0, len(frag)})
	}
	for _, h := range m.hits {
		if !slices.Contains(r.keywords, h.keyword) {
			continue
		}
		ws, we := r.reach.back(frag, h.end), r.reach.forth(frag, h.start)
		for n := 0; ws > 0 && n < 64 && isWord(frag[ws-1]); n++ {
			ws--
		}
		for n := 0; we < len(frag) && n < 64 && isWord(frag[we]); n++ {
			we++
		}
		if k := len(m.windows); k > 0 && ws <= m.windows[k-1][1] {
			m.windows[k-1][1] = max(m.windows[k-1][1], we)
			continue
		}
		m.windows = append(m.windows, [2]int{ws, we})
	}
	return m.windows
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// anyHit reports whether the fragment holds one of keywords, or the rule
// has none.
func (m *matcher) anyHit(keywords []int) bool {
	if len(keywords) == 0 {
		return true
	}
	for _, k := range keywords {
		if m.hit[k] {
			return true
		}
	}
	return false
}

// check turns a match of rule r at frag[ms:me] into a finding (offsets in
// frag), or reports false when the rule's entropy threshold or an
// allowlist lets it pass.
func (s *scanner) check(r *rule, frag []byte, ms, me int) (Finding, bool) {
	// As the detector: the match without the line breaks at its ends (a
	// regex that ends on \s may take one), then the regex again on that.
	m := frag[ms:me]
	lead := len(m) - len(bytes.TrimLeft(m, "\n"))
	m = bytes.Trim(m, "\n")
	ms += lead
	me = ms + len(m)
	ss, se := ms, me
	if g := r.Regex.FindSubmatchIndex(m); len(g) >= 4 {
		if r.SecretGroup > 0 {
			if 2*r.SecretGroup+1 < len(g) {
				ss, se = ms+g[2*r.SecretGroup], ms+g[2*r.SecretGroup+1]
			}
		} else {
			for i := 2; i+1 < len(g); i += 2 {
				if g[i] >= 0 && g[i+1] > g[i] {
					ss, se = ms+g[i], ms+g[i+1]
					break
				}
			}
		}
	}
	if ss < 0 || se <= ss {
		return Finding{}, false // a secret group that matched nothing
	}
	secret := frag[ss:se]
	if r.Entropy != 0 && entropy(secret) <= r.Entropy {
		return Finding{}, false
	}
	// The line: from the line break before the match to the one after it.
	ls := bytes.LastIndexByte(frag[:ms], '\n') + 1
	le := len(frag)
	if i := bytes.IndexByte(frag[me:], '\n'); i >= 0 {
		le = me + i
	}
	line := frag[ls:le]
	if bytes.Contains(line, []byte("gitleaks:allow")) {
		return Finding{}, false
	}
	sec, match, ln := string(secret), string(m), string(line)
	if findingAllowed(sec, match, ln, s.path, s.rs.allow) || findingAllowed(sec, match, ln, s.path, r.Allowlists) {
		return Finding{}, false
	}
	return Finding{Rule: r.RuleID, Path: s.path, Start: int64(ss), End: int64(se)}, true
}

// overruled reports whether generic finding f gives way to a specific
// rule's finding on its line whose secret holds f's (the detector's
// filter).
func (s *scanner) overruled(data []byte, f found) bool {
	secret := s.bytes(data, f.Start, f.End)
	for _, g := range s.found {
		if g.Line == f.Line && !s.rs.rules[g.rule].generic && bytes.Contains(s.bytes(data, g.Start, g.End), secret) {
			return true
		}
	}
	return false
}

// bytes is the scanned bytes [start, end), which data holds.
func (s *scanner) bytes(data []byte, start, end int64) []byte {
	return data[start-s.base : end-s.base]
}

// lineOf returns the number of the line offset at is on, counting line
// breaks from the last offset asked for (which data holds).
func (s *scanner) lineOf(data []byte, at int64) int {
	if at < s.linePos {
		s.line -= bytes.Count(s.bytes(data, at, s.linePos), []byte{'\n'})
		s.linePos = at
	}
	s.countLines(data, at)
	return s.line
}

// countLines moves the line count on to offset to, when it is not past it.
func (s *scanner) countLines(data []byte, to int64) {
	if to > s.linePos {
		s.line += bytes.Count(s.bytes(data, s.linePos, to), []byte{'\n'})
		s.linePos = to
	}
}

// entropy is the Shannon entropy of b's characters, as gitleaks reckons it
// (characters counted, divided by the length in bytes).
func entropy(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	counts := map[rune]int{}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		counts[r]++
		i += n
	}
	e := 0.0
	inv := 1 / float64(len(b))
	for _, c := range counts {
		f := float64(c) * inv
		e -= f * math.Log2(f)
	}
	return e
}
