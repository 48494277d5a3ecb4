package snap

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"rewind.dev/internal/layout"
)

// A spilled plan is a restore's plan kept in files instead of memory.
//
// A restore from a manifest that differs from the tree in many entries (a tree emptied by
// hand, every file rewritten) would hold an operation per entry, the entries, and a map of
// their paths. That is hundreds of bytes a file: most of a gigabyte at a million files.
//
// Past spillAt entries, the plan is made a block at a time. Each block's operations are
// written to files in the staging folder (spillFile). The staging and the changes to the tree
// are then done from those files as they are read back, so memory holds one block whatever the
// tree's size. Those files are the plan's store (spilledPlan, a planStore): what reads the plan
// reads it the same way as one held in memory.
//
// The checks are the same ones, over the same entries. A block is planned with the entries
// above it as context: the folders open at its start, and the last entry of each side. A
// folder that the snapshot replaces by a file needs all it holds checked; that was done as the
// walk went through it (see replaceCheck).
//
// Where names fold, a block is never cut while an entry in it may still be paired with a
// spelling to come (see spellingsOpen). Each block is planned with its own spellings, so a
// block never starts inside a snapshot's folder that a tree's file, spelt otherwise, stands
// for.

// spillAt is how many entries, of both sides, the plan over what differs
// holds before it writes them to the staging folder as a block. Tests make
// blocks of a few entries (RestoreOptions.spillAt).
const spillAt = 1 << 15

// spilledPlan is a plan written to the staging folder (a planStore).
type spilledPlan struct {
	blocks   *spillFile // the sparse walk's kept entries: blockSnap, blockTree, then blockEnd
	ops      *spillFile // the plan's operations, a block's after the block's before (tag: kind, existed)
	blockOps []int      // the operations written when each block ended
	cands    *spillFile // the tree's entries the snapshot does not have as they are (tag: inSnap)
	dels     *spillFile // of those, the ones deleted (tag: inSnap)
	n        opCounts   // the operations written, counted
	deleted  deletions  // the paths deleted, for the result
	tmp      string     // a dry run's: the temporary folder outside the tree its files are in
	most     int        // the most entries a block held
}

// Tags of the blocks file.
const (
	blockSnap byte = iota
	blockTree
	blockEnd
)

// Tags of the ops, cands and dels files.
const (
	tagExisted = 1 << 2 // ops: something in scope was at the path
	tagInSnap  = 1      // cands, dels: the snapshot has the path, however it spells it (as another kind)
)

// dropSpill removes what the plan wrote to the staging folder: the plan is
// made another way.
func (p *restorePlan) dropSpill() {
	if s := p.spill; s != nil {
		s.close()
		if s.tmp == "" {
			for _, f := range []*spillFile{s.blocks, s.ops, s.cands, s.dels} {
				p.r.Remove(p.stage + "/" + path.Base(f.f.Name()))
			}
		}
		p.spill, p.store = nil, nil
	}
}

// close closes the plan's files, and removes a dry run's temporary folder.
func (s *spilledPlan) close() {
	for _, f := range []*spillFile{s.blocks, s.ops, s.cands, s.dels} {
		if f != nil {
			f.f.Close()
		}
	}
	s.deleted.names.Close() // (unless the result took it)
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}

// keepBlock writes a block's operations, and counts them.
func (s *spilledPlan) keepBlock(ops []restoreOp) error {
	for i := range ops {
		op := &ops[i]
		tag := byte(op.kind)
		if op.existed {
			tag |= tagExisted
		}
		extra := op.staged
		if op.from != "" { // (no staged name holds a NUL)
			extra += "\x00" + op.from
		}
		if err := s.ops.put(tag, &op.entry, extra); err != nil {
			return err
		}
		s.n.add(op)
	}
	s.blockOps = append(s.blockOps, s.ops.n)
	return nil
}

func (s *spilledPlan) eachOp(fn func(i int, op *restoreOp) error) error {
	i := 0
	var op restoreOp
	return s.ops.each(func(tag byte, e *Entry, extra string) error {
		staged, from, _ := strings.Cut(extra, "\x00")
		op = restoreOp{kind: opKind(tag &^ tagExisted), entry: *e, staged: staged, existed: tag&tagExisted != 0, from: from}
		i++
		return fn(i-1, &op)
	})
}

func (s *spilledPlan) eachDelete(fn func(d *Entry, inSnap bool) error) error {
	return s.dels.each(func(tag byte, d *Entry, _ string) error {
		return fn(d, tag&tagInSnap != 0)
	})
}

// eachChange reads the plan back as it hands its changes on: each block's
// operations are of paths after the block's before, and its deletions are
// in walk order, so the two are merged as they are read, a block's changes
// held at a time.
func (s *spilledPlan) eachChange(fn func(Change) error) error {
	r, err := s.ops.reader()
	if err != nil {
		return err
	}
	var block []Change // the block's changes not yet handed on, in path order
	var ops []restoreOp
	read, b := 0, 0 // operations read, blocks
	// handUpTo hands on the operations' changes at or before path (all of
	// them, for "").
	handUpTo := func(path string) error {
		for {
			for len(block) == 0 && b < len(s.blockOps) {
				ops = ops[:0]
				for ; read < s.blockOps[b]; read++ {
					var op restoreOp
					tag, extra, err := r.next(&op.entry)
					if err != nil {
						return s.ops.readError(err)
					}
					op.kind, op.existed = opKind(tag&^tagExisted), tag&tagExisted != 0
					_, op.from, _ = strings.Cut(extra, "\x00")
					ops = append(ops, op)
				}
				b++
				block = opChanges(ops)
				slices.SortStableFunc(block, func(x, y Change) int { return comparePaths(x.Path, y.Path) })
			}
			if len(block) == 0 || path != "" && comparePaths(block[0].Path, path) > 0 {
				return nil
			}
			if err := fn(block[0]); err != nil {
				return err
			}
			block = block[1:]
		}
	}
	err = s.dels.each(func(tag byte, d *Entry, _ string) error {
		if tag&tagInSnap != 0 {
			return nil // (a kind change, modified)
		}
		if err := handUpTo(d.Path); err != nil {
			return err
		}
		return fn(Change{Type: "change", Op: OpAdded, Path: d.Path, Kind: d.Kind.String()})
	})
	if err != nil {
		return err
	}
	return handUpTo("")
}

func (s *spilledPlan) counts() *opCounts { return &s.n }

func (s *spilledPlan) takeDeleted() deletions {
	d := s.deleted
	s.deleted = deletions{}
	return d
}

// spillFile is a file of records in the staging folder (a dry run's: in a
// temporary folder outside the tree): a tag byte, an entry, and a string.
// Written, then read from its start as often as need be (each reader its
// own).
type spillFile struct {
	f    *os.File
	root string // the tree restored, for errors
	w    *bufio.Writer
	n    int    // records written
	src  string // the last entry's Src (written only when it changes)
	buf  []byte
}

// newSpill creates the spill file name in the staging folder.
func (p *restorePlan) newSpill(name string) (*spillFile, error) {
	if tmp := p.spill.tmp; tmp != "" {
		f, err := os.OpenFile(filepath.Join(tmp, name), os.O_CREATE|os.O_EXCL|os.O_RDWR, layout.FileMode)
		if err != nil {
			return nil, fmt.Errorf("restore into %s: write its plan in a temporary folder (a dry run too big to hold; set TMPDIR to a folder it may write): %w", p.root, err)
		}
		return &spillFile{f: f, root: p.root, w: bufio.NewWriterSize(f, 256<<10)}, nil
	}
	f, err := p.r.OpenFile(p.stage+"/"+name, os.O_CREATE|os.O_EXCL|os.O_RDWR, layout.FileMode)
	if err != nil {
		return nil, fmt.Errorf("restore into %s: write its plan in the staging folder: %w", p.root, err)
	}
	return &spillFile{f: f, root: p.root, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

// put writes a record.
func (s *spillFile) put(tag byte, e *Entry, extra string) error {
	var b []byte
	b, s.src = appendRecord(s.buf[:0], tag, e, extra, s.src)
	s.buf = b
	s.n++
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("restore into %s: write its plan in the staging folder: %w", s.root, err)
	}
	return nil
}

// appendRecord appends the record of a tag, an entry and a string to b,
// its Src only where it is not src (the last written), and returns the
// Src written last.
func appendRecord(b []byte, tag byte, e *Entry, extra, src string) ([]byte, string) {
	b = append(b, tag, byte(e.Kind))
	b = binary.AppendUvarint(b, uint64(e.Mode))
	for _, v := range [...]int64{e.Size, e.MTime, e.CTime, e.COff, e.Skip} {
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendUvarint(b, e.Ino)
	fields := [...]string{e.Path, e.Hash, e.Link, extra}
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	if e.Src == src {
		return append(b, 0), src
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(e.Src)))
	return append(b, e.Src...), e.Src
}

// each reads the records from the first: fn gets each (its entry reused
// from one call to the next; its strings are its own).
func (s *spillFile) each(fn func(tag byte, e *Entry, extra string) error) error {
	r, err := s.reader()
	if err != nil {
		return err
	}
	var e Entry
	for i := 0; i < s.n; i++ {
		tag, extra, err := r.next(&e)
		if err != nil {
			return s.readError(err)
		}
		if err := fn(tag, &e, extra); err != nil {
			return err
		}
	}
	return nil
}

// reader reads the records from the first (s.n of them).
func (s *spillFile) reader() (*spillReader, error) {
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("restore into %s: write its plan in the staging folder: %w", s.root, err)
	}
	return &spillReader{r: bufio.NewReaderSize(io.NewSectionReader(s.f, 0, 1<<62), 256<<10)}, nil
}

func (s *spillFile) readError(err error) error {
	return fmt.Errorf("restore into %s: read its plan back from %s: %w", s.root, s.f.Name(), err)
}

type spillReader struct {
	r   *bufio.Reader
	src string
}

func (r *spillReader) next(e *Entry) (tag byte, extra string, err error) {
	defer func() {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
	}()
	if tag, err = r.r.ReadByte(); err != nil {
		return 0, "", err
	}
	k, err := r.r.ReadByte()
	if err != nil {
		return 0, "", err
	}
	mode, err := binary.ReadUvarint(r.r)
	if err != nil {
		return 0, "", err
	}
	*e = Entry{Kind: Kind(k), Mode: fs.FileMode(mode)}
	for _, v := range [...]*int64{&e.Size, &e.MTime, &e.CTime, &e.COff, &e.Skip} {
		if *v, err = binary.ReadVarint(r.r); err != nil {
			return 0, "", err
		}
	}
	if e.Ino, err = binary.ReadUvarint(r.r); err != nil {
		return 0, "", err
	}
	for _, f := range [...]*string{&e.Path, &e.Hash, &e.Link, &extra} {
		if *f, err = r.str(); err != nil {
			return 0, "", err
		}
	}
	changed, err := r.r.ReadByte()
	if err != nil {
		return 0, "", err
	}
	if changed == 1 {
		if r.src, err = r.str(); err != nil {
			return 0, "", err
		}
	}
	e.Src = r.src
	return tag, extra, nil
}

func (r *spillReader) str() (string, error) {
	n, err := binary.ReadUvarint(r.r)
	if err != nil || n == 0 {
		return "", err
	}
	if n > 1<<20 {
		return "", errors.New("a record longer than any the plan writes")
	}
	var sb strings.Builder
	sb.Grow(int(n))
	if _, err := io.CopyN(&sb, r.r, int64(n)); err != nil {
		return "", err
	}
	return sb.String(), nil
}

// spillBlock writes the sparse walk's kept entries as a block.
func (p *restorePlan) spillBlock(sp *sparsePlan, tree []Entry) error {
	s := p.spill
	if s == nil {
		s = &spilledPlan{deleted: deletions{each: p.paths != nil, most: p.listHeld, dir: p.tempDir}}
		p.spill, p.store = s, s
		var err error
		if p.stage == "" { // a dry run's
			if s.tmp, err = os.MkdirTemp(p.tempDir, "rewind-plan-"); err != nil {
				return fmt.Errorf("restore into %s: write its plan in a temporary folder (a dry run too big to hold; set TMPDIR to a folder it may write): %w", p.root, err)
			}
		}
		for _, f := range []struct {
			to   **spillFile
			name string
		}{{&s.blocks, "blocks"}, {&s.ops, "ops"}, {&s.cands, "candidates"}, {&s.dels, "deletes"}} {
			if *f.to, err = p.newSpill("plan-" + f.name); err != nil {
				return err
			}
		}
	}
	s.most = max(s.most, len(sp.snap)+len(tree))
	for i := range sp.snap {
		if err := s.blocks.put(blockSnap, &sp.snap[i], ""); err != nil {
			return err
		}
	}
	for i := range tree {
		if err := s.blocks.put(blockTree, &tree[i], ""); err != nil {
			return err
		}
	}
	return s.blocks.put(blockEnd, &Entry{}, "")
}

// planSpilled plans the blocks written by the sparse walk, then its last
// one (sp), writing each block's operations and candidates for deletion
// as it goes; then stages what they need and decides the deletions.
func (p *restorePlan) planSpilled(ctx context.Context, m *Manifest, limits Limits, rules *snapshotRules, sp *sparsePlan) error {
	s := p.spill
	var snapUp, treeUp []Entry // the entries above the next block's, each side, and the last one
	// What the plan knew of snapUp when the block before ended: in a restore
	// limited to paths, a folder outside them is only once a path inside it
	// was planned (see enter).
	var known []Entry
	block := func(snap, tree []Entry) error {
		p.current = append(append(make([]Entry, 0, len(treeUp)+len(tree)), treeUp...), tree...)
		p.cur = treeIndex{entries: p.current}
		if p.spell != nil {
			// Where names fold, the spellings the block's entries pair
			// with are in it (see sparsePass.cut).
			p.spell = newSpellings(p.fold, p.spell.same)
			for i := range p.current {
				p.spell.tree = append(p.spell.tree, &p.current[i])
			}
		}
		p.snapshot = make(map[string]Kind, len(snapUp)+len(snap))
		for _, d := range known {
			p.snapshot[d.Path] = d.Kind
		}
		if err := p.planManifest(ctx, m, limits, p.stage != "", rules, &sparsePlan{snap: snap}); err != nil {
			return err
		}
		var replaced []Entry // folders the snapshot replaces that are deleted, for checkSelection
		for i := len(treeUp); i < len(p.current); i++ {
			c := &p.current[i]
			k, ok := p.snapshot[p.snapName(c.Path)]
			if ok && k == c.Kind {
				continue
			}
			tag := byte(0)
			if ok {
				tag = tagInSnap
				if p.paths != nil && c.Kind == KindDir && p.isDeleted(c, true, false, rules) {
					replaced = append(replaced, *c)
				}
			}
			if err := s.cands.put(tag, c, ""); err != nil {
				return err
			}
		}
		if err := p.checkSelection(p.ops, replaced); err != nil {
			return err
		}
		if err := s.keepBlock(p.ops); err != nil {
			return err
		}
		p.ops = p.ops[:0]
		snapUp, treeUp = stillAbove(snapUp, snap), stillAbove(treeUp, tree)
		known = known[:0]
		for _, d := range snapUp {
			if k, ok := p.snapshot[d.Path]; ok {
				known = append(known, Entry{Path: d.Path, Kind: k})
			}
		}
		return nil
	}
	var snap, tree []Entry
	err := s.blocks.each(func(tag byte, e *Entry, _ string) error {
		switch tag {
		case blockSnap:
			snap = append(snap, *e)
		case blockTree:
			tree = append(tree, *e)
		default:
			err := block(snap, tree)
			snap, tree = snap[:0], tree[:0]
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := block(sp.snap, sp.tree.Entries); err != nil {
		return err
	}
	p.current, p.cur, p.snapshot = nil, treeIndex{}, nil
	if p.stage != "" { // (a dry run stages nothing, as planHeld)
		if err := p.fetch(ctx, limits, rules); err != nil {
			return err
		}
	}
	var open []string // (see leftInReplaced)
	return s.cands.each(func(tag byte, c *Entry, _ string) error {
		deleted := p.isDeleted(c, tag&tagInSnap != 0, false, rules)
		p.leftInReplaced(&open, c, tag&tagInSnap != 0, deleted)
		if !deleted {
			return nil
		}
		s.deleted.add(c)
		return s.dels.put(tag, c, "")
	})
}

// stillAbove is up (entries, each inside the one before) after entries:
// those of it that the last of entries is inside, then the last of entries
// and the entries above it.
func stillAbove(up []Entry, entries []Entry) []Entry {
	for i := range entries {
		e := &entries[i]
		for len(up) > 0 && !strings.HasPrefix(e.Path, up[len(up)-1].Path+"/") {
			up = up[:len(up)-1]
		}
		up = append(up, *e)
	}
	return up
}
