package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Title is a session title found in a transcript.
type Title struct {
	Text   string `json:"title"`
	Offset int64  `json:"offset"` // the start of the line that holds it
	Field  string `json:"field"`  // the dotted path of the title in that line
}

// Title finds the session's title: the newest line of the highest-ranked title source (Claude:
// the newest custom-title beats any ai-title; Droid: session_start.title). Titles can be written
// anywhere, so the whole file is looked at — by a block scan for the literal each source's match
// requires, which runs at memory speed, parsing only the lines holding one (all lines when a
// source has no such literal). ok is false when there is none.
func (t *Transcript) Title(ctx context.Context) (title Title, ok bool, err error) {
	if t.Dialect == nil || len(t.Dialect.Title.Sources) == 0 {
		return Title{}, false, nil
	}
	bestRank := -1
	judge := func(line []byte, offset int64) {
		c := Clean(line)
		for _, s := range t.Dialect.Title.Sources {
			if s.Rank < bestRank || !mayMatch(c, s.Match) {
				continue
			}
			o := parseObject(c)
			if o == nil || !s.Match.holds(o, nil) {
				continue
			}
			if v := o.str(s.Field); v != "" {
				title, ok, bestRank = Title{Text: v, Offset: offset, Field: s.Field}, true, s.Rank
			}
		}
	}
	starts, scanned, err := t.titleCandidates(ctx)
	if err != nil {
		return Title{}, false, err
	}
	if scanned {
		for _, start := range starts { // ascending: a newer line of a rank wins
			line, err := t.lineAt(start)
			if err != nil {
				return Title{}, false, err
			}
			judge(line, start)
		}
		return title, ok, nil
	}
	i := 0
	err = t.Lines(0, func(l Line) bool {
		if i++; i%256 == 0 && ctx.Err() != nil {
			return false
		}
		judge(l.Data, l.Offset)
		return true
	})
	if err == nil {
		err = ctx.Err()
	}
	return title, ok, err
}

// titleCandidates returns the starts of the complete lines that may be title lines, ascending:
// the lines holding the JSON literal each title source's match requires (Claude:
// "custom-title", "ai-title"). scanned is false when a source has no literal of at least four
// bytes to look for (every line must be judged).
func (t *Transcript) titleCandidates(ctx context.Context) (starts []int64, scanned bool, err error) {
	var needles [][]byte
	for _, s := range t.Dialect.Title.Sources {
		var lit []byte
		for _, c := range s.Match {
			if len(c.Equals) > 0 && len(c.Equals) > len(lit) {
				lit = c.Equals
			}
		}
		if len(lit) < 4 {
			return nil, false, nil
		}
		needles = append(needles, lit)
	}
	passes := literalPasses(needles)
	longest := 0
	for _, n := range needles {
		longest = max(longest, len(n))
	}
	const block = 4 << 20
	size := t.end
	buf := make([]byte, min(block+int64(longest), size))
	for off := int64(0); off < size; off += block {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		b := buf[:min(int64(len(buf)), size-off)]
		if _, err := t.ra.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, false, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		for _, p := range passes {
			var err error
			p.find(b, block, func(i int) bool { // a hit starting in the overlap belongs to the next block
				var start int64
				start, err = t.lineStart(off + int64(i))
				starts = append(starts, start)
				return err == nil
			})
			if err != nil {
				return nil, false, err
			}
		}
	}
	slices.Sort(starts)
	return slices.Compact(starts), true, nil
}

// literalPass finds several literals in one scan, by a run of bytes they all hold (Claude's
// "custom-title" and "ai-title" share `-title"`): a pass per literal would read every block
// once for each, and a literal that starts with '"' (as the JSON literals do) makes
// bytes.Index stop at every string in the data, where the shared run stops far less often.
type literalPass struct {
	common []byte
	lits   [][]byte
	at     []int // where common starts in each literal
}

// literalPasses is one pass for all literals when they share a run of at least four bytes (a
// single literal shares all of itself), else one pass per literal.
func literalPasses(lits [][]byte) []literalPass {
	if c := commonRun(lits); len(c) >= 4 {
		p := literalPass{common: c, lits: lits}
		for _, l := range lits {
			p.at = append(p.at, bytes.Index(l, c))
		}
		return []literalPass{p}
	}
	var ps []literalPass
	for _, l := range lits {
		ps = append(ps, literalPass{common: l, lits: [][]byte{l}, at: []int{0}})
	}
	return ps
}

// commonRun is the longest run of bytes every literal holds (the first such in the shortest).
func commonRun(lits [][]byte) []byte {
	if len(lits) == 0 {
		return nil
	}
	short := lits[0]
	for _, l := range lits {
		if len(l) < len(short) {
			short = l
		}
	}
	for n := len(short); n > 0; n-- {
	next:
		for i := 0; i+n <= len(short); i++ {
			for _, l := range lits {
				if !bytes.Contains(l, short[i:i+n]) {
					continue next
				}
			}
			return short[i : i+n]
		}
	}
	return nil
}

// find calls hit with the start of every literal in b that starts before limit, in the order
// found, until hit returns false.
func (p literalPass) find(b []byte, limit int, hit func(int) bool) {
	for i := 0; ; i++ {
		j := bytes.Index(b[i:], p.common)
		if j < 0 {
			return
		}
		i += j
		for k, l := range p.lits {
			s := i - p.at[k]
			if s >= 0 && s < limit && s+len(l) <= len(b) && bytes.Equal(b[s:s+len(l)], l) && !hit(s) {
				return
			}
		}
	}
}

// lineStart finds the start of the line holding byte at.
func (t *Transcript) lineStart(at int64) (int64, error) {
	buf := make([]byte, 4096)
	for pos := at; pos > 0; {
		n := min(int64(len(buf)), pos)
		if _, err := t.ra.ReadAt(buf[:n], pos-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos - n + int64(i) + 1, nil
		}
		pos -= n
	}
	return 0, nil
}

// lineAt returns the complete line starting at start, without its newline.
func (t *Transcript) lineAt(start int64) ([]byte, error) {
	var line []byte
	buf := make([]byte, 4096)
	for pos := start; pos < t.end; {
		n := min(int64(len(buf)), t.end-pos)
		if _, err := t.ra.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(line, buf[:i]...), nil
		}
		line = append(line, buf[:n]...)
		pos += n
	}
	return line, nil
}

// ForkTitle returns title marked as a fork's (the dialect's prefix, "[Fork] "), without
// doubling a prefix that is already there.
func (d *Dialect) ForkTitle(title string) string {
	p := d.Title.Fork.Prefix
	if p == "" || strings.HasPrefix(title, p) {
		return title
	}
	return p + title
}

// ForkTitleLine returns the line (with its newline) a fork appends to carry its title, for
// dialects whose fork method is "append_line" (to the fork) or "index_line" (to the agent's
// index of names); ok is false for other methods. title is used as
// given (apply ForkTitle first); sessionID is the fork's own session id. vars fill the line's
// other placeholders: {parent_id} (in a tree dialect, the line the fork's conversation ends
// at), {entry_id} (a new id for the line itself), {timestamp}.
func (d *Dialect) ForkTitleLine(title, sessionID string, vars map[string]string) (line []byte, ok bool, err error) {
	if m := d.Title.Fork.Method; m != "append_line" && m != "index_line" || len(d.Title.Fork.Line) == 0 {
		return nil, false, nil
	}
	// Compact, as the agents write their lines.
	var compact bytes.Buffer
	if err := json.Compact(&compact, d.Title.Fork.Line); err != nil {
		return nil, false, fmt.Errorf("dialect %s: fork title line is not valid JSON", d.Name)
	}
	line = compact.Bytes()
	line = bytes.ReplaceAll(line, []byte("{title}"), jsonStringBody(title))
	line = bytes.ReplaceAll(line, []byte("{session_id}"), jsonStringBody(sessionID))
	for k, v := range vars {
		line = bytes.ReplaceAll(line, []byte("{"+k+"}"), jsonStringBody(v))
	}
	if !json.Valid(line) {
		return nil, false, fmt.Errorf("dialect %s: fork title line is not valid JSON", d.Name)
	}
	return append(line, '\n'), true, nil
}

// jsonStringBody is s encoded as a JSON string, without the quotes.
func jsonStringBody(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out := bytes.TrimSpace(b.Bytes())
	return out[1 : len(out)-1]
}
