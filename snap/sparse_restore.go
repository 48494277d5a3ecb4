package snap

import (
	"context"
	"errors"
	"io"
	"path"
	"path/filepath"
	"strings"
)

// A sparsePlan is what a restore from a manifest plans over, when the
// tree is compared with the manifest as it is walked (walkMerged) rather
// than listed whole: the pairs of entries the same in both (each counted
// unchanged) are left out, and what is kept of either side — every entry
// that differs or is alone on its side, the ignore files (whose rules the
// plan reads), the snapshot's own files, and the folders above all those —
// is what the plan would have looked at anyway. The plan's checks and
// lookups (the folders above a path, what stands in its way) find there
// what they would find in the whole tree and manifest; where names fold
// (see Folding), so do its spellings: only a pair spelt alike is left out,
// so a name the two sides spell otherwise is kept on both, and a manifest
// that spells one name twice in a folder is refused as the pass goes
// (see archiveScanner.scoped).
type sparsePlan struct {
	tree    *Tree          // the walk's, with only the tree's entries kept
	snap    []Entry        // the manifest's entries kept, their own copies
	dropped int            // pairs of files left out (counted unchanged)
	rules   *snapshotRules // an archive's: its ignore files' rules, read as the pass went
}

// errImpliedFolder is a manifest that leaves a folder it holds entries in
// unlisted (none Rewind writes does): its plan needs every path of it.
var errImpliedFolder = errors.New("a folder implied, not listed")

type sparseFolder struct {
	e    Entry
	kept bool
}

// sparse walks the tree beside m, checking every manifest entry as the
// plan would, and returns what the plan is made over; nil when m implies a
// folder it does not list (the caller plans over the whole tree then).
// Past spillAt entries kept, a restore that stages writes them to its
// staging folder, a block at a time (see spill.go): the sparsePlan then
// holds the last block.
func (p *restorePlan) sparse(ctx context.Context, walk WalkOptions, m *Manifest, limits Limits) (*sparsePlan, error) {
	chk := &archiveScanner{name: m.File, limits: limits, fold: p.fold, ordered: true, scoped: true, csize: 1 << 62}
	p.leftUnreadable = map[string]bool{} // (compare makes it again, with what the walk could not read)
	for _, u := range m.Header.Unreadable {
		p.leaveUnreadable(u)
	}
	return p.sparseOver(ctx, walk, m.each, func(o, c *Entry) (*Entry, bool, error) {
		e := *o // (read as the pass goes: what is kept is copied)
		e.Path, e.Link, e.Hash = strings.Clone(o.Path), strings.Clone(o.Link), strings.Clone(o.Hash)
		if err := chk.checkEntry(&e); err != nil {
			return nil, false, err
		}
		// A file is the same by metadata the manifest vouches for, as the
		// plan takes it.
		return &e, c != nil && c.sameStat(&e) && !m.racy(&e), nil
	})
}

// inTree is the Src of a file a plan over an archive (sparseArchive) keeps
// whose content the tree's file at its path has: only its mode, if
// anything, changes. There, a kept file's Src says where its content is:
// the staging folder's file of that name, or nowhere yet (a dry run).
const inTree = "="

// sparseArchive is sparse over an archive read whole, beside the walk:
// each file is compared byte for byte with the tree's at its path as it
// is read, and staged when it differs (see inTree); the ignore files' rules
// are read as it goes. It returns errDisordered when the archive is out
// of walk order (not one Rewind wrote) or implies a folder it does not
// list: its copy in walk order lists such folders (see inWalkOrder); nil,
// should a copy imply one all the same: the caller plans over the whole
// tree then.
func (p *restorePlan) sparseArchive(ctx context.Context, walk WalkOptions, archive string, limits Limits, rules *snapshotRules, stage bool) (*sparsePlan, error) {
	as, err := openArchive(archive, limits, p.fold)
	if err != nil {
		return nil, err
	}
	defer as.Close()
	as.ordered, as.scoped = true, true // (checked in walk order: no map of every path)
	if err := as.refuseLayer(); err != nil {
		return nil, err
	}
	p.leftUnreadable = map[string]bool{} // (compare makes it again, with what the walk could not read)
	at := &archiveTake{p: p, rules: rules, stage: stage, buf: make([]byte, 256*1024), buf2: make([]byte, 256*1024)}
	each := func(fn func(e *Entry) error) error {
		for {
			e, r, err := as.next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := as.refuseWhiteout(e); err != nil {
				return err
			}
			at.content = r
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	if pf := newPrefetch(p.r, p.prefetchAfter); pf != nil {
		walk.ahead = pf.add
		defer pf.stop() // (after sparseOver: the walk is over)
	}
	sp, err := p.sparseOver(ctx, walk, each, at.take)
	if as.disordered || sp == nil && err == nil && !p.copied {
		// Out of walk order, or a file before the folder it is in (which
		// may come later: so it is out of walk order too, or the archive
		// implies the folder, which its copy in walk order lists).
		p.dropSpill()
		return nil, errDisordered
	}
	if sp == nil || err != nil {
		return nil, err
	}
	sp.tree.Unreadable = append(sp.tree.Unreadable, at.unreadable...)
	sp.rules = rules
	p.compared = true
	return sp, nil
}

// archiveTake is sparseArchive's take (see sparseOver): each file of the
// archive compared with the tree's as it is read, and staged where it
// differs.
type archiveTake struct {
	p          *restorePlan
	rules      *snapshotRules
	stage      bool
	content    io.Reader // the file the archive is at
	newTop     string    // the topmost folder open that the tree does not have
	unreadable []string  // the tree's files compareFile could not read
	buf, buf2  []byte
}

// take makes the archive's entry e (the tree's c at its path, or nil) the
// plan's, and tells whether a file pair has the same content and mode.
func (a *archiveTake) take(e, c *Entry) (*Entry, bool, error) {
	// (e is the scanner's, made for this entry: the plan may keep it)
	if a.newTop != "" && !strings.HasPrefix(e.Path, a.newTop+"/") {
		a.newTop = ""
	}
	if a.newTop == "" && c == nil && e.Kind == KindDir {
		a.newTop = e.Path
	}
	if e.Kind != KindFile || underAny(e.Path, a.p.state) || a.p.isInput(e.Path) || a.p.isLeftUnreadable(e.Path) {
		return e, false, nil // (the plan leaves the last three as they are)
	}
	rulesOf := false
	if base := path.Base(e.Path); (base == ".gitignore" || base == ".rewindignore") && e.Size <= 1<<20 {
		a.rules.add(e.Path, &a.content)
		rulesOf = true
	}
	if !a.p.paths.Match(e.Path, false) {
		// Outside the paths restored: left as it is, neither compared
		// nor staged (a pair of one kind is left out; see leftOut),
		// but for an ignore file's rules, read.
		if rulesOf {
			if _, err := io.Copy(io.Discard, a.content); err != nil {
				return nil, false, archiveReadErr(e, err)
			}
		}
		return e, true, nil
	}
	// A file in a folder the plan will most often create is staged at
	// its path in the staging folder's tree, to be moved in with that
	// folder (see stagedAt); elsewhere by number.
	name := ""
	if a.newTop != "" {
		name = inStagedTree(e.Path)
	}
	tc := c
	if tc == nil && a.p.spell != nil {
		tc = a.p.speltOtherwise(e.Path)
	}
	same, staged, err := a.p.compareFile(e, tc, a.content, a.stage, name, a.buf, a.buf2)
	if err != nil {
		return nil, false, err
	}
	switch {
	case a.p.leftUnreadable[e.Path]:
		a.unreadable = append(a.unreadable, e.Path)
	case same:
		e.Src = inTree
	default:
		e.Src = staged
	}
	return e, same && c != nil && c.Mode == e.Mode, nil
}

// speltOtherwise returns, on a file system that folds names, the tree's
// file that name opens where the walk met none at name: one it spells
// otherwise (see Folding), which the plan pairs with the snapshot's, so
// its content is compared as a file at name would be. Nil where name opens
// nothing, or not a regular file, or through a symlink: each folder above
// is looked at in turn, as itself.
func (p *restorePlan) speltOtherwise(name string) *Entry {
	fi, err := p.r.Lstat(filepath.FromSlash(name))
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		if di, err := p.r.Lstat(filepath.FromSlash(d)); err != nil || !di.IsDir() {
			return nil
		}
	}
	return &Entry{Path: name, Kind: KindFile, Size: fi.Size()}
}

// sparseOver is sparse over the snapshot's entries each gives, in walk
// order: take makes the snapshot's entry o (its tree's c at the same path,
// or nil) the plan's own, and tells whether a file pair has the same
// content and mode.
func (p *restorePlan) sparseOver(ctx context.Context, walk WalkOptions, each func(fn func(e *Entry) error) error, take func(o, c *Entry) (own *Entry, sameFile bool, err error)) (*sparsePlan, error) {
	w := &sparsePass{p: p, sp: &sparsePlan{}, open: spellingsOpen{fold: p.fold}}
	t, err := walkMerged(ctx, p.root, walk, each, func(o, c *Entry) error {
		var own *Entry
		sameFile := false
		at := ""
		if o != nil {
			var err error
			if own, sameFile, err = take(o, c); err != nil {
				return err
			}
			at = own.Path
		} else {
			at = c.Path
		}
		return w.step(at, own, c, sameFile)
	})
	if w.rc != nil {
		w.rc.finish()
	}
	if errors.Is(err, errImpliedFolder) {
		p.dropSpill()
		p.replaceChecked = map[string]*replaceCheck{} // (the whole plan looks again)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t.Entries = w.tree
	w.sp.tree = t
	return w.sp, nil
}

// sparsePass is sparseOver's pass: what it keeps of each side as the walk
// goes, and where a block may end.
type sparsePass struct {
	p              *restorePlan
	sp             *sparsePlan
	tree           []Entry
	snapUp, treeUp []sparseFolder // the folders above the last path met, each side
	hold           string         // a folder the next block must not start inside
	rc             *replaceCheck  // a folder the snapshot replaces, looked at as the walk goes through it
	open           spellingsOpen  // where names fold: entries a pair may yet be made of (see cut)
}

// cut reports whether a block may end before the entry at: where names
// fold, not while an entry on one side may be paired with one at or after
// at (the planner pairs spellings within a block), nor inside a folder of
// the snapshot's that the tree's file spelt otherwise stands for (hold).
func (w *sparsePass) cut(at string) bool {
	if w.hold != "" {
		return false
	}
	return w.p.spell == nil || w.open.closedAt(at)
}

// popTo is up without the folders at is not inside.
func popTo(up []sparseFolder, at string) []sparseFolder {
	for len(up) > 0 {
		d := up[len(up)-1].e.Path
		if len(at) > len(d) && at[len(d)] == '/' && strings.HasPrefix(at, d) {
			break
		}
		up = up[:len(up)-1]
	}
	return up
}

// step takes the walk's next pair, at the path at: the snapshot's entry
// own (made the plan's) and the tree's c, either nil; sameFile tells
// whether a file pair has the same content and mode. A pair the same on
// both sides is dropped; the others are kept, with the folders above
// them, and written out as a block when there are too many to hold.
func (w *sparsePass) step(at string, own, c *Entry, sameFile bool) error {
	p, sp := w.p, w.sp
	if w.hold != "" && !strings.HasPrefix(at, w.hold+"/") {
		w.hold = ""
	}
	if w.rc != nil && !strings.HasPrefix(at, w.rc.dir+"/") {
		w.rc.finish()
		w.rc = nil
	}
	if w.rc != nil && c != nil {
		p.replaceWalked(w.rc, c)
	}
	if (p.stage != "" || p.spillOut) && len(sp.snap)+len(w.tree) >= p.spillAt && w.cut(at) {
		// Too many to hold: written as a block (see spill.go).
		if err := p.spillBlock(sp, w.tree); err != nil {
			return err
		}
		sp.snap, w.tree = sp.snap[:0], w.tree[:0]
	}
	w.snapUp, w.treeUp = popTo(w.snapUp, at), popTo(w.treeUp, at)
	if own != nil {
		if d := path.Dir(own.Path); d != "." && (len(w.snapUp) == 0 || w.snapUp[len(w.snapUp)-1].e.Path != d) {
			return errImpliedFolder
		}
	}
	if p.sameInBoth(own, c, sameFile) {
		// Counted unchanged as the plan counts it: within the paths
		// restored (and the pathspec told it matched something).
		// Folders are not counted (only files are).
		counted := own.Kind != KindDir && p.paths.Match(own.Path, false)
		if counted {
			sp.dropped++
		}
		if own.Kind == KindDir {
			w.snapUp = append(w.snapUp, sparseFolder{e: *own})
			w.treeUp = append(w.treeUp, sparseFolder{e: *c})
		}
		return nil
	}
	w.keep(own, c)
	return nil
}

// keep keeps the pair own and c (either nil) that differ, and the folders
// above them not kept yet.
func (w *sparsePass) keep(own, c *Entry) {
	p, sp := w.p, w.sp
	for i := range w.snapUp {
		if f := &w.snapUp[i]; !f.kept {
			f.kept = true
			sp.snap = append(sp.snap, f.e)
		}
	}
	for i := range w.treeUp {
		if f := &w.treeUp[i]; !f.kept {
			f.kept = true
			w.tree = append(w.tree, f.e)
		}
	}
	if p.spell != nil && own == nil {
		w.open.add(c, true) // (left on one side: its other spelling may come)
	}
	if p.spell != nil && c == nil {
		w.open.add(own, false)
		if w.hold == "" && own.Kind == KindDir && w.open.replacesNotDir(own.Path) {
			// The tree's file spelt otherwise, before it, is planned
			// in this block: what the folder holds must be too.
			w.hold = own.Path
		}
	}
	if own != nil {
		sp.snap = append(sp.snap, *own)
		if own.Kind == KindDir {
			w.snapUp = append(w.snapUp, sparseFolder{e: *own, kept: true})
		}
	}
	if c != nil && c.Kind == KindDir && own != nil && own.Kind != KindDir {
		// A folder the snapshot replaces: checked as the walk goes
		// through it, for checkReplaceable and checkSelection (a block
		// may end inside it).
		w.rc = p.startReplaceCheck(c.Path)
		p.replaceChecked[c.Path] = w.rc
	}
	if c != nil {
		w.tree = append(w.tree, *c)
		if c.Kind == KindDir {
			w.treeUp = append(w.treeUp, sparseFolder{e: *c, kept: true})
		}
	}
}

// sameInBoth reports whether the snapshot's entry o and the tree's c are
// a pair the plan would count unchanged and nothing else: the same kind,
// mode and content (for files, sameFile), neither an ignore file, one of
// the snapshot's own files, nor left alone.
func (p *restorePlan) sameInBoth(o, c *Entry, sameFile bool) bool {
	if o == nil || c == nil || o.Kind != c.Kind || o.Path != c.Path {
		return false
	}
	if base := path.Base(o.Path); base == ".gitignore" || base == ".rewindignore" {
		return false
	}
	if p.isInput(o.Path) || p.isLeftUnreadable(o.Path) || underAny(o.Path, p.state) {
		return false
	}
	switch o.Kind {
	case KindDir:
		return o.Mode == c.Mode
	case KindSymlink:
		return o.Link == c.Link
	case KindFile:
		return sameFile
	}
	return false
}
