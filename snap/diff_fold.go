package snap

import "unicode/utf8"

// respeltQueue hands on a diff's changes in path order on a file system
// that folds names (see Folding), where a path the merge of the two sides
// leaves on one side may be the other side's under another spelling, met
// before it or after. It holds what it must, not every change: an entry
// left on one side waits for its other spelling only as far as that could
// come in walk order (see lastSpelling) — for a name in ASCII, up to its
// spelling in lower case, the last of them all (README.md waits up to
// readme.md); for one out of ASCII, past the names that start as it does
// up to the letter before its first one out of ASCII (Été waits to the end
// of its folder) — and the changes after it wait behind it. (Nor does a
// name wait for a spelling out of ASCII that Unicode's case folding takes
// for a letter in it — a Kelvin sign for its k — which lies past that
// bound: such a pair is told as deleted and added.)
type respeltQueue struct {
	fold Folding
	same func(treePath, snapPath string) bool // see spellings
	// compare tells how the tree's e differs from the snapshot's o, which
	// name one path spelt otherwise: "" for not at all but the spelling.
	compare func(e, o *Entry) (Op, error)
	emit    func(Change) error

	items []*queuedChange            // in path order, the oldest not handed on first
	open  map[string][]*queuedChange // those left on one side and still unpaired, by fold key
}

type queuedChange struct {
	ch    Change
	drop  bool   // no change after all (a pair the same on both sides, or the tree's side of a pair)
	one   *Entry // left on one side, unpaired yet: the tree's (added) or the snapshot's (deleted)
	snap  bool   // one is the snapshot's
	until string // one's other spelling cannot come after this path; "" where no bound is known
}

func newRespeltQueue(fold Folding, same func(treePath, snapPath string) bool, compare func(e, o *Entry) (Op, error), emit func(Change) error) *respeltQueue {
	return &respeltQueue{fold: fold, same: same, compare: compare, emit: emit, open: map[string][]*queuedChange{}}
}

// pair gives the change the tree's e and the snapshot's o make, one path
// spelt two ways: at the snapshot's spelling, renamed where nothing else
// differs but the case of its name; ok false where nothing does.
func (q *respeltQueue) pair(e, o *Entry) (ch Change, ok bool, err error) {
	op, err := q.compare(e, o)
	if op == "" && respelled(e.Path, o.Path) {
		op = OpRenamed
	}
	return Change{Type: "change", Op: op, Path: o.Path, Kind: e.Kind.String(), TreePath: treeName(e, o.Path)}, op != "", err
}

// change queues a change at the path the merge is at.
func (q *respeltQueue) change(ch Change) error {
	q.items = append(q.items, &queuedChange{ch: ch})
	return q.flush(ch.Path)
}

// added queues the tree's entry e, which the snapshot lacks as spelt, and
// pairs it with the snapshot's entry left over earlier that names it.
func (q *respeltQueue) added(e *Entry) error {
	if o := q.take(e.Path, false); o != nil {
		// The snapshot's spelling came first: the change stands there.
		ch, ok, err := q.pair(e, o.one)
		if err != nil {
			return err
		}
		o.one, o.ch, o.drop = nil, ch, !ok
		return q.flush(e.Path)
	}
	q.wait(e, false, Change{Type: "change", Op: OpAdded, Path: e.Path, Kind: e.Kind.String()})
	return q.flush(e.Path)
}

// deleted queues the snapshot's entry o, which the tree lacks as spelt,
// and pairs it with the tree's entry left over earlier that it names.
func (q *respeltQueue) deleted(o *Entry) error {
	if t := q.take(o.Path, true); t != nil {
		// The tree's spelling came first: its place is given up, and the
		// change stands at the snapshot's spelling, here.
		ch, ok, err := q.pair(t.one, o)
		if err != nil {
			return err
		}
		t.one, t.drop = nil, true
		if ok {
			q.items = append(q.items, &queuedChange{ch: ch})
		}
		return q.flush(o.Path)
	}
	q.wait(o, true, Change{Type: "change", Op: OpDeleted, Path: o.Path, Kind: o.Kind.String()})
	return q.flush(o.Path)
}

// take finds, among the entries of the other side left unpaired, the one
// that names p (a snapshot's path when snap), and takes it out of those.
func (q *respeltQueue) take(p string, snap bool) *queuedChange {
	k := q.fold.Key(p)
	for i, c := range q.open[k] {
		if c.snap == snap || c.one == nil {
			continue
		}
		treePath, snapPath := c.one.Path, p
		if snap {
			treePath, snapPath = p, c.one.Path
		}
		if treePath != snapPath && q.same(treePath, snapPath) {
			q.open[k] = append(q.open[k][:i:i], q.open[k][i+1:]...)
			if len(q.open[k]) == 0 {
				delete(q.open, k)
			}
			return c
		}
	}
	return nil
}

// wait queues one, left on its side, as the change ch it is unless its
// other spelling comes.
func (q *respeltQueue) wait(one *Entry, snap bool, ch Change) {
	c := &queuedChange{ch: ch, one: one, snap: snap}
	c.until, _ = lastSpelling(q.fold, one.Path)
	q.items = append(q.items, c)
	k := q.fold.Key(one.Path)
	q.open[k] = append(q.open[k], c)
}

// flush hands on the changes at the head of the queue that nothing met
// at or after at (the path the merge is at) can change.
func (q *respeltQueue) flush(at string) error {
	n := 0
	for _, c := range q.items {
		if c.one != nil && (c.until == "" || comparePaths(c.until, at) >= 0) {
			break // its other spelling may yet come
		}
		if c.one != nil {
			q.forget(c)
		}
		if !c.drop {
			if err := q.emit(c.ch); err != nil {
				return err
			}
		}
		n++
	}
	clear(q.items[:n]) // (what is handed on is let go)
	q.items = q.items[n:]
	return nil
}

// forget takes c, left on its side, out of those that may yet be paired.
func (q *respeltQueue) forget(c *queuedChange) {
	k := q.fold.Key(c.one.Path)
	for i, o := range q.open[k] {
		if o == c {
			q.open[k] = append(q.open[k][:i:i], q.open[k][i+1:]...)
			break
		}
	}
	if len(q.open[k]) == 0 {
		delete(q.open, k)
	}
	c.one = nil
}

// finish hands on what is left: nothing else is coming.
func (q *respeltQueue) finish() error {
	for _, c := range q.items {
		if !c.drop {
			if err := q.emit(c.ch); err != nil {
				return err
			}
		}
	}
	q.items, q.open = nil, nil
	return nil
}

// lastSpelling returns a path in walk order that no spelling of p a file
// system folding names as fold does may take comes after: for a path in
// ASCII, its spelling in lower case (upper-case letters sort before
// lower-case ones, and a spelling keeps every slash where it is), or p
// itself where case is not folded. Out of ASCII, a spelling keeps what
// comes before p's first byte out of it, in some case, but for the letter
// just before (e and a combining acute accent spell é): the bound is that
// start in lower case and then the end of the byte order (0xff, which no
// name in UTF-8 holds) — for a name whose first letter is out of ASCII,
// the end of its folder. ok is false where the bound is the end of the
// tree. (Unicode's case folding takes a few letters out of ASCII for ones
// in it — a Kelvin sign for k — which sort after: they are not looked for.)
func lastSpelling(fold Folding, p string) (last string, ok bool) {
	if !fold.Folds() {
		return p, true
	}
	i := 0
	for i < len(p) && p[i] < utf8.RuneSelf {
		i++
	}
	if i == len(p) {
		if fold.Case {
			return asciiLower(p), true
		}
		return p, true
	}
	if i > 0 && p[i-1] != '/' {
		i-- // may compose with what follows
	}
	if i == 0 {
		return "", false
	}
	start := p[:i]
	if fold.Case {
		start = asciiLower(start)
	}
	return start + "\xff", true
}

// spellingsOpen follows, along a pass in walk order, the entries left on
// one side whose other spelling may still come: a pass where names fold
// is only cut (see sparseOver) where none may.
type spellingsOpen struct {
	fold    Folding
	last    string          // the last path in walk order an entry open may be paired at
	forever bool            // an entry open may be paired anywhere after (see lastSpelling)
	notDirs map[string]bool // the fold keys of the tree's entries open that are not folders
}

// add opens e, left on one side (the tree's when tree).
func (o *spellingsOpen) add(e *Entry, tree bool) {
	last, ok := lastSpelling(o.fold, e.Path)
	switch {
	case !ok:
		o.forever = true
	case comparePaths(last, o.last) > 0:
		o.last = last
	}
	if tree && e.Kind != KindDir {
		if o.notDirs == nil {
			o.notDirs = map[string]bool{}
		}
		o.notDirs[o.fold.Key(e.Path)] = true
	}
}

// replacesNotDir reports whether the snapshot's folder d, left on its
// side, may be paired with a tree's entry open that is not a folder: the
// snapshot replaces it by a folder, and what is below d is planned with it
// (see sparseOver).
func (o *spellingsOpen) replacesNotDir(d string) bool {
	return o.notDirs[o.fold.Key(d)]
}

// closedAt reports whether no entry opened may be paired at at or after,
// and then forgets them.
func (o *spellingsOpen) closedAt(at string) bool {
	if o.forever || o.last != "" && comparePaths(o.last, at) >= 0 {
		return false
	}
	o.last = ""
	clear(o.notDirs)
	return true
}
