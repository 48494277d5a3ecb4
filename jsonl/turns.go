package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Turn is one real user prompt and the lines that follow it up to the next prompt.
type Turn struct {
	// N counts prompts from the end: 1 is the most recent.
	N int `json:"n"`
	// Offset is where a cut before this prompt goes: before the prompt line and before the
	// lines the agent wrote for it just before it (the dialect's preamble: Claude's
	// file-history-snapshot and queue-operation lines). A fork keeps [0, Offset).
	Offset int64 `json:"offset"`
	// PromptOffset is where the prompt line itself starts (≥ Offset). A checkpoint taken at the
	// agent's prompt hook has a cursor between Offset and PromptOffset: compare cursors with
	// PromptOffset to find "the code as it was before this prompt".
	PromptOffset int64 `json:"prompt_offset"`
	// End is where the turn ends: the next prompt's Offset, or the end of the complete data.
	End int64 `json:"end"`
	// ID is the prompt line's event id ("" when the agent writes none).
	ID string `json:"id"`
	// ParentID is the id of the line the prompt follows in a tree dialect (pi): a fork before
	// the prompt must end there. Empty elsewhere.
	ParentID  string `json:"parent_id,omitempty"`
	Timestamp string `json:"timestamp"`
	// Text is the prompt's text, at most 200 characters ("[image]" for an image-only prompt).
	Text string `json:"text"`
}

// ScanTurns calls fn for each turn, newest first, until fn returns false. It reads the file
// backwards in blocks from the end: stopping after the Nth turn costs the bytes between that
// turn and the end, not the size of the file.
func (t *Transcript) ScanTurns(ctx context.Context, fn func(Turn) bool) error {
	if err := t.needDialect(); err != nil {
		return err
	}
	if t.end == 0 {
		return nil
	}
	d := t.Dialect
	sc := &turnScan{t: t, d: d, fn: fn, r: NewReverseReader(t.ra, t.end), newer: t.end,
		path: newTreePath(d.Tree), versions: newRecordVersions(d), rewound: newRewinds(d)}
	for i := 0; ; i++ {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		l, err := sc.r.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		if stop, err := sc.line(l); stop || err != nil {
			return err
		}
	}
	if sc.pending != nil {
		sc.emit()
	}
	return nil
}

// turnScan is a scan of a transcript's turns from its end: the turn being built and what
// the lines passed say of the ones before.
type turnScan struct {
	t  *Transcript
	d  *Dialect
	fn func(Turn) bool
	r  *ReverseReader

	pending    *Turn
	prompt     *object
	lookback   int  // lines passed since the pending prompt
	contiguous bool // no line outside the preamble passed yet
	n          int
	newer      int64 // Offset of the newer turn: the End of the one being built
	path       *treePath
	versions   *recordVersions
	rewound    *rewinds
}

// emit hands the pending turn to fn; false when fn wants no more.
func (sc *turnScan) emit() bool {
	sc.n++
	sc.pending.N = sc.n
	sc.pending.End = sc.newer
	sc.newer = sc.pending.Offset
	tu := *sc.pending
	sc.pending, sc.prompt = nil, nil
	return sc.fn(tu)
}

// line takes the line before those passed; stop says the scan is done.
func (sc *turnScan) line(l Line) (stop bool, err error) {
	d := sc.d
	if !sc.path.on(l.Data) {
		return false, nil // a branch the conversation left
	}
	earlier := sc.versions.earlier(l.Data) // an older version of a record already passed
	dropped := sc.rewound.dropped(l.Data)  // a record a rewind after it took out
	if sc.pending != nil && sc.lookback < d.Preamble.MaxLines {
		sc.lookback++
		switch d.preambleRole(l.Data, sc.prompt, sc.contiguous) {
		case roleOwned:
			sc.pending.Offset = l.Offset
			sc.contiguous = true
			return false, nil
		case roleTransparent:
			return false, nil
		}
		sc.contiguous = false
		if d.Preamble.linked() && sc.lookback < d.Preamble.MaxLines {
			// A line linked to the prompt (its file-history-snapshot) may sit a few lines
			// further back: keep looking, but never past another prompt.
			if ev, o := d.classify(l.Data, true); ev.Kind == KindPrompt && !earlier && !dropped && !sc.versions.counted(ev.ID) {
				if !sc.emit() {
					return true, nil
				}
				return false, sc.start(l, ev, o, earlier, dropped)
			}
			return false, nil
		}
	}
	if sc.pending != nil && !sc.emit() {
		return true, nil
	}
	if ev, o := d.classify(l.Data, true); ev.Kind == KindPrompt {
		return false, sc.start(l, ev, o, earlier, dropped)
	}
	return false, nil
}

// start makes the prompt line l the pending turn, at its record's first line; it does not
// when l is an older version of a record already passed (earlier), one a rewind took out
// (dropped), or a prompt already counted.
func (sc *turnScan) start(l Line, ev Event, o *object, earlier, dropped bool) error {
	if earlier || dropped || !sc.versions.count(ev.ID) {
		return nil
	}
	sc.pending = &Turn{Offset: l.Offset, PromptOffset: l.Offset, ID: ev.ID, ParentID: sc.path.parent, Timestamp: ev.Timestamp, Text: ev.Text}
	sc.prompt, sc.lookback, sc.contiguous = ownObject(o, l.Data), 0, true
	first, err := sc.versions.first(sc.t, l.Offset, ev.ID)
	if err != nil || first == l.Offset {
		return err
	}
	sc.pending.Offset, sc.pending.PromptOffset = first, first
	sc.r = NewReverseReader(sc.t.ra, first)
	return nil
}

type preambleRole int

const (
	roleNone preambleRole = iota
	roleOwned
	roleTransparent
)

// preambleRole tells whether a line before a prompt belongs to the prompt, is passed over, or
// is outside the preamble. Owned rules linked to the prompt (equals_prompt_field) hold anywhere
// in the look-back window; the others only while every line since the prompt was preamble
// (contiguous). Blank and garbage lines are passed over.
func (d *Dialect) preambleRole(line []byte, prompt *object, contiguous bool) preambleRole {
	p := &d.Preamble
	if len(p.Owned) == 0 && len(p.Transparent) == 0 {
		return roleNone
	}
	c := Clean(line)
	if len(c) == 0 {
		return roleTransparent
	}
	may := func(cs []Conds) bool {
		for _, c1 := range cs {
			if mayMatch(c, c1) {
				return true
			}
		}
		return false
	}
	if !may(p.Owned) && !may(p.Transparent) {
		if c[0] != '{' {
			return roleTransparent
		}
		return roleNone
	}
	o := parseObject(c)
	if o == nil {
		return roleTransparent
	}
	for _, cs := range p.Owned {
		if (contiguous || cs.linked()) && cs.holds(o, prompt) {
			return roleOwned
		}
	}
	for _, cs := range p.Transparent {
		if cs.holds(o, prompt) {
			return roleTransparent
		}
	}
	return roleNone
}

func mayMatch(line []byte, cs Conds) bool {
	for _, n := range cs.needles() {
		if !containsBytes(line, n) {
			return false
		}
	}
	return true
}

// Turns returns the last n turns, newest first (every turn when n ≤ 0).
func (t *Transcript) Turns(ctx context.Context, n int) ([]Turn, error) {
	var out []Turn
	err := t.ScanTurns(ctx, func(tu Turn) bool {
		out = append(out, tu)
		return n <= 0 || len(out) < n
	})
	return out, err
}

// Back returns the Nth most recent turn (n ≥ 1): cutting at its Offset rewinds the
// conversation to before that prompt. With fewer than n prompts it returns an error wrapping
// ErrFewerPrompts.
func (t *Transcript) Back(ctx context.Context, n int) (Turn, error) {
	if n < 1 {
		return Turn{}, fmt.Errorf("back %d: the count must be at least 1", n)
	}
	turns, err := t.Turns(ctx, n)
	if err != nil {
		return Turn{}, err
	}
	if len(turns) < n {
		return Turn{}, fmt.Errorf("%s has %d user prompt(s), asked to go back %d: %w", displayPath(t.Path), len(turns), n, ErrFewerPrompts)
	}
	return turns[n-1], nil
}

// linked reports whether the conditions tie a line to the prompt (equals_prompt_field).
func (cs Conds) linked() bool {
	for _, c := range cs {
		if c.EqualsPromptField != "" {
			return true
		}
	}
	return false
}

// linked reports whether any owned rule is linked to the prompt.
func (p *PreambleRule) linked() bool {
	for _, cs := range p.Owned {
		if cs.linked() {
			return true
		}
	}
	return false
}

// ownObject re-parses a prompt's object from a copy of its line: the reverse reader reuses its
// buffers, and the prompt's fields are read again while the lines before it are looked at.
func ownObject(o *object, line []byte) *object {
	if o == nil {
		return nil
	}
	return parseObject(Clean(append([]byte(nil), line...)))
}

// treePath follows the conversation's path through a tree dialect's lines, read from the end:
// the last line with an id is the leaf, and each line on the path names the next one up.
type treePath struct {
	rule   *TreeRule
	want   string // the id of the next line on the path; "" before the leaf is found
	done   bool   // the root was passed: no line with an id is on the path any more
	parent string // the parent id of the line on() last accepted
}

func newTreePath(r *TreeRule) *treePath { return &treePath{rule: r} }

// on reports whether a line, read backwards, is on the path. Lines without an id (a header,
// garbage) are neither on a branch nor on the path: they pass. Without a tree rule every line
// is on it.
func (p *treePath) on(line []byte) bool {
	p.parent = ""
	if p.rule == nil {
		return true
	}
	o := parseObject(Clean(line))
	if o == nil {
		return true
	}
	id := o.str(p.rule.ID)
	if id == "" {
		return true
	}
	if p.done || p.want != "" && id != p.want {
		return false
	}
	p.parent = o.str(p.rule.Parent)
	p.want = p.parent
	p.done = p.parent == ""
	return true
}

// PathIDs returns, in a tree dialect, the ids of the line with id leaf and of every line above
// it on its path to the root — the conversation as far as leaf. It reads backwards from the
// end, so its cost is the distance to the root, as far as a branch point reaches.
func (t *Transcript) PathIDs(ctx context.Context, leaf string) (map[string]bool, error) {
	ids := map[string]bool{}
	if t.Dialect == nil || t.Dialect.Tree == nil || leaf == "" {
		return ids, nil
	}
	rule := t.Dialect.Tree
	want := leaf
	r := NewReverseReader(t.ra, t.end)
	for i := 0; want != ""; i++ {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		l, err := r.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		o := parseObject(Clean(l.Data))
		if o == nil || o.str(rule.ID) != want {
			continue
		}
		ids[want] = true
		want = o.str(rule.Parent)
	}
	return ids, nil
}

// ParentSession is, in a tree dialect whose agent records it, the transcript this one was
// forked from by the agent itself ("" when none).
func (t *Transcript) ParentSession() (string, error) {
	if t.Dialect == nil || t.Dialect.Tree == nil || t.Dialect.Tree.ParentSession == "" {
		return "", nil
	}
	var first []byte
	if err := t.Lines(0, func(l Line) bool { first = l.Data; return false }); err != nil {
		return "", err
	}
	o := parseObject(Clean(first))
	if o == nil {
		return "", nil
	}
	return o.str(t.Dialect.Tree.ParentSession), nil
}

// ForkedFromID is the id of the session the agent itself forked t from, where its dialect
// records one in the first line (ForkedFrom); "" when none.
func (t *Transcript) ForkedFromID() (string, error) {
	if t.Dialect == nil || t.Dialect.ForkedFrom == "" {
		return "", nil
	}
	var first []byte
	if err := t.Lines(0, func(l Line) bool { first = l.Data; return false }); err != nil {
		return "", err
	}
	o := parseObject(Clean(first))
	if o == nil {
		return "", nil
	}
	return o.str(t.Dialect.ForkedFrom), nil
}

// PreambleStart is where the lines before offset that would belong to a prompt written next
// begin: walking back from offset over the dialect's owned preamble lines (Claude's queue
// lines, Codex's turn_context and task_started…), as a cut before that prompt would. A rule
// linked to the prompt's own fields holds for any value, the prompt being unknown. It is
// offset when no such line ends there.
func (t *Transcript) PreambleStart(ctx context.Context, offset int64) (int64, error) {
	d := t.Dialect
	if d == nil || len(d.Preamble.Owned) == 0 || offset > t.end {
		return offset, nil
	}
	start := offset
	r := NewReverseReader(t.ra, offset)
	for i := 0; i < d.Preamble.MaxLines; i++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		l, err := r.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		o := parseObject(Clean(l.Data))
		if o == nil {
			break
		}
		owned := false
		for _, cs := range d.Preamble.Owned {
			if cs.holdsUnlinked(o) {
				owned = true
				break
			}
		}
		if !owned {
			break
		}
		start = l.Offset
	}
	return start, nil
}

// holdsUnlinked is holds with every condition linked to the prompt taken as true.
func (cs Conds) holdsUnlinked(o *object) bool {
	for _, c := range cs {
		if c.EqualsPromptField == "" && !c.holds(o, nil) {
			return false
		}
	}
	return true
}

// recordVersions follows, in a dialect whose records are updated by id (Gemini), which lines
// are versions of one record, for a scan read from the end. Versions of a record follow each
// other with only id-less lines between (the agent updates its last record), so a line is an
// older version when its id is that of the nearest line with an id after it. Without
// UpdatesByID every line is a record of its own.
type recordVersions struct {
	d       *Dialect
	on      bool
	later   string          // the id of the nearest line with an id after the current one
	prompts map[string]bool // the ids of the prompts counted
}

func newRecordVersions(d *Dialect) *recordVersions {
	return &recordVersions{d: d, on: d.UpdatesByID, prompts: map[string]bool{}}
}

// lineID is the id of a line, "" when it has none.
func (v *recordVersions) lineID(data []byte) string {
	o := parseObject(Clean(data))
	if o == nil {
		return ""
	}
	return o.str(v.d.IDField)
}

// earlier reports whether the line, the next one read backwards, is an older version of the
// record after it.
func (v *recordVersions) earlier(data []byte) bool {
	if !v.on {
		return false
	}
	id := v.lineID(data)
	if id == "" {
		return false
	}
	older := id == v.later
	v.later = id
	return older
}

// counted reports whether a prompt of this id was counted already: its versions stood apart,
// which the agent does not write; counting it again would make one prompt two turns.
func (v *recordVersions) counted(id string) bool {
	return v.on && id != "" && v.prompts[id]
}

// count records a prompt as counted; false when it was already.
func (v *recordVersions) count(id string) bool {
	if !v.on || id == "" {
		return true
	}
	if v.prompts[id] {
		return false
	}
	v.prompts[id] = true
	return true
}

// first is the offset of the first version of the record whose version starts at offset: it
// reads back over id-less lines (none of them a prompt) and older versions.
func (v *recordVersions) first(t *Transcript, offset int64, id string) (int64, error) {
	if !v.on || id == "" {
		return offset, nil
	}
	first := offset
	r := NewReverseReader(t.ra, offset)
	for {
		l, err := r.Prev()
		if errors.Is(err, io.EOF) {
			return first, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		switch lid := v.lineID(l.Data); {
		case lid == id:
			first = l.Offset
		case lid != "":
			return first, nil
		default:
			if ev, _ := v.d.classify(l.Data, true); ev.Kind == KindPrompt {
				return first, nil
			}
		}
	}
}

// rewinds follows, for a scan read from the end, the lines that rewind the conversation
// (Gemini CLI's native /rewind writes {"$rewindTo":<record id>}): the record named and every
// record after it, up to the rewind line, left the conversation (the agent loads the file
// without them), so their prompts are no turns. A record named but never found takes every
// record before the rewind with it, as the agent's loader does.
type rewinds struct {
	field, idField string
	needle         []byte
	pending        map[string]bool // records named by rewind lines, not reached yet
}

func newRewinds(d *Dialect) *rewinds {
	w := &rewinds{field: d.RewindField, idField: d.IDField, pending: map[string]bool{}}
	if w.field != "" {
		w.needle, _ = json.Marshal(w.field)
	}
	return w
}

// dropped reports whether the line, the next one read backwards, is a record a rewind after it
// took out; a rewind line starts taking out records up to the one it names.
func (w *rewinds) dropped(data []byte) bool {
	if w.field == "" || len(w.pending) == 0 && !bytes.Contains(data, w.needle) {
		return false
	}
	o := parseObject(Clean(data))
	if o == nil {
		return false
	}
	if target := o.str(w.field); target != "" {
		w.pending[target] = true
		return false
	}
	id := o.str(w.idField)
	if id == "" || len(w.pending) == 0 {
		return false
	}
	delete(w.pending, id)
	return true
}

// Compacted reports whether a line of t marks a compaction (the dialect's compaction rules).
func (t *Transcript) Compacted(ctx context.Context) (bool, error) {
	_, ok, err := t.FirstCompaction(ctx)
	return ok, err
}

// FirstCompaction is where the first line marking a compaction starts, if any. The lines
// before it are still the file's: an agent that compacts in place (Claude Code, Codex, pi)
// keeps them, so a cut before it resumes with the conversation as it was.
func (t *Transcript) FirstCompaction(ctx context.Context) (int64, bool, error) {
	if t.Dialect == nil || len(t.Dialect.Compaction) == 0 {
		return 0, false, nil
	}
	var at int64
	found := false
	err := t.Lines(0, func(l Line) bool {
		if ctx.Err() != nil {
			return false
		}
		o := parseObject(Clean(l.Data))
		if o == nil {
			return true
		}
		for _, cs := range t.Dialect.Compaction {
			if cs.holds(o, nil) {
				at, found = l.Offset, true
				return false
			}
		}
		return true
	})
	if err == nil {
		err = ctx.Err()
	}
	return at, found, err
}
