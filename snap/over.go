package snap

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"
)

// createOver is Create for a layer over a parent opened with OpenManifest
// (opts.Layer and opts.Parent, no opts.Tree), in memory that does not grow with the tree:
// the walk is compared with the parent as it goes (WalkEach), and of the
// tree only what differs is kept, with the folders above it. The Result's
// Manifest then holds only those entries (see sparseSave): it is written
// with Encode over opts.Parent and compared with Diff against it,
// as a layer's always is, and nothing else. Where no layer can be laid (no
// parent read that way, a chain too deep or too large) it is Walk and
// createFromTree. Over a tree that differs from the parent in more than
// layerMost entries it writes nothing and returns ErrLayerTooBig.
func createOver(ctx context.Context, root string, walk WalkOptions, opts CreateOptions) (*Result, error) {
	parent := opts.Parent
	if !opts.Layer || parent == nil || parent.stream == nil || parent.File == "" || parent.Header.Archive == "" || !layerFits(parent, opts.MaxDepth) {
		tree, err := Walk(ctx, root, walk)
		if err != nil {
			return nil, err
		}
		return createFromTree(ctx, root, tree, opts)
	}
	limits := opts.Limits.Or(DefaultLimits)
	s, tree, err := sparseWalk(ctx, root, walk, parent, limits, opts)
	if err != nil {
		return nil, err
	}
	var recorded *Limits
	if limits != DefaultLimits {
		recorded = &limits
	}
	unchanged, exact := s.same, s.same && !s.hashed
	if !slices.Equal(sortedUnion(tree.Unreadable, nil), parent.Header.Unreadable) || !sameRules(parent.Header.Rules, tree.Rules) {
		unchanged, exact = false, false // what could not be read, or the rules, changed
	}
	if exact && opts.Reuse && limitsOf(parent) == limits {
		res := resultFor(parent, tree, true, "")
		res.Reused, res.Layer = true, parent.Header.Parent != ""
		return res, nil
	}
	if opts.Out == "" {
		return nil, ErrNoArchive
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return nil, err
	}
	s.r.first = unsafe.SliceData(s.entries)
	parent.recall = s.r
	// What the walk saw of a file the archive writes is what it finds there
	// now, unless the file changed in between: then the figures are taken
	// again from the tree the layer describes.
	before := make([]Entry, len(s.entries))
	copy(before, s.entries)
	kept, lost, compressed, err := writeArchive(ctx, root, out, s.entries, parent, opts.Level, limitsUnchecked)
	if err != nil {
		return nil, err
	}
	hdr := s.hdr
	if s.stale || len(kept) != len(before) || !sameFigures(kept, before) {
		if hdr, err = s.figures(kept); err != nil {
			return nil, err
		}
		c := limitCount{l: limits, entries: hdr.Files + hdr.Dirs + hdr.Symlinks, bytes: hdr.Bytes}
		if err := c.done(); err != nil {
			return nil, err
		}
	}
	m := &Manifest{Entries: kept, Header: hdr, sparse: true}
	m.Header.Type, m.Header.Version, m.Header.ScanStarted = "manifest", ManifestVersion, tree.Started
	m.wrote(out, compressed, tree, lost, recorded, parent)
	res := resultFor(m, tree, unchanged, out)
	res.Layer = true
	return res, nil
}

// layerMost is how many entries a layer save keeps (the entries that
// differ, with the folders above them, and the parent's side of what
// differs or is gone: 250 bytes or so each) before it gives up with
// ErrLayerTooBig.
const layerMost = 1 << 15

// ErrLayerTooBig is a layer written as the walk goes (Create with Parent
// and Layer, without Tree) over a tree that differs from its parent in
// more than layerMost entries: the layer would be held whole to be
// written, so none is; the caller writes a full snapshot instead (Create
// without Parent), as the walk goes.
var ErrLayerTooBig = errors.New("snap: the tree differs from the parent in too many entries for a layer")

// createOverFull is Create for a full snapshot judged against a parent
// opened with OpenManifest (opts.Parent, without opts.Layer or opts.Tree:
// rewind-snap create --parent-manifest), in memory that does not grow with the tree.
// The walk is compared with the parent as it goes (as createOver's). An
// unchanged tree writes no archive: its manifest is the parent's with what
// was touched (same content, other metadata) laid over it
// (Manifest.Overlay), a full one whatever the parent is, read as it is
// written. A changed tree is walked again and written whole by createFull,
// its manifest to manifest as there.
func createOverFull(ctx context.Context, root string, walk WalkOptions, opts CreateOptions, manifest string) (*Result, error) {
	parent := opts.Parent
	if parent == nil || parent.stream == nil || opts.Layer {
		return nil, errors.New("snap: a full snapshot compared with its parent as the walk goes takes a parent opened with OpenManifest, and no layer")
	}
	limits := opts.Limits.Or(DefaultLimits)
	s, tree, err := sparseWalk(ctx, root, walk, parent, limits, opts)
	if errors.Is(err, ErrLayerTooBig) {
		opts.Parent = nil // changed: written whole
		return createFull(ctx, root, walk, opts, manifest)
	}
	if err != nil {
		return nil, err
	}
	unreadable := sortedUnion(tree.Unreadable, nil)
	if !s.same || !slices.Equal(unreadable, parent.Header.Unreadable) || !sameRules(parent.Header.Rules, tree.Rules) {
		opts.Parent = nil
		return createFull(ctx, root, walk, opts, manifest)
	}
	var recorded *Limits
	if limits != DefaultLimits {
		recorded = &limits
	}
	m := parent.Overlay(s.entries, nil)
	m.Header = s.hdr
	m.Header.Type, m.Header.Version, m.Header.ScanStarted = "manifest", ManifestVersion, tree.Started
	m.Header.Archive, m.Header.CompressedBytes = parent.Header.Archive, parent.Header.CompressedBytes
	m.Header.Limits, m.Header.Unreadable, m.Header.Rules = recorded, unreadable, &tree.Rules
	m.sizes = parent.sizes
	return resultFor(m, tree, true, ""), nil
}

// LayerFits reports whether a layer may go over m, a chain's newest
// manifest: its chain is not at maxDepth (0: DefaultMaxDepth), nor its
// layers together larger than its full snapshot. Where it is, the next
// snapshot is a full one.
func (m *Manifest) LayerFits(maxDepth int) bool { return layerFits(m, maxDepth) }

// layerFits is Manifest.LayerFits.
func layerFits(parent *Manifest, maxDepth int) bool {
	if maxDepth == 0 {
		maxDepth = DefaultMaxDepth
	}
	p := parent.Header
	return p.Depth+1 <= maxDepth && (p.Depth == 0 || p.ChainCompressed <= p.BaseCompressed)
}

// limitsUnchecked are limits nothing reaches: createOver checks the tree's
// own, which the sparse list it archives does not show.
var limitsUnchecked = Limits{MaxEntries: int(^uint(0) >> 1), MaxBytes: int64(^uint64(0) >> 1), MaxPath: int(^uint(0) >> 1), MaxDepth: int(^uint(0) >> 1)}

// sameFigures reports whether the archive left every entry as the walk saw
// it in what a tree hash and a header's counts read.
func sameFigures(a, b []Entry) bool {
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Path != y.Path || x.Kind != y.Kind || x.Mode != y.Mode || x.Size != y.Size || x.Hash != y.Hash || x.Link != y.Link {
			return false
		}
	}
	return true
}

// A sparseSave is createOver's pass: the walk merged with the parent in
// walk order, each fresh entry settled as inherit settles it, then let go
// unless it differs from the parent's. What it keeps (entries) is, in walk
// order, every fresh entry that differs and the folders above each path
// that differs or is gone, with a recall (r) of the parent's side: the
// passes of a layer over the parent (its plan, its delta's lines, the count
// of changes) merge the two as they would the whole tree and the parent.
type sparseSave struct {
	settler // (keeping nothing of the parent's: one copies what it keeps)

	entries      []Entry
	r            *recall
	folders      []folderAbove // the folders above the last path met, outermost first
	limits       limitCount
	hdr          ManifestHeader // the counts and tree hash of the tree walked
	th           treeHasher
	stale        bool  // a file's hash is not known: the tree hash is taken again after the archive
	resizedBytes int64 // of new and resized files hashed as the walk went
	most         int   // the entries kept at most (layerMost)
	n            int
}

type folderAbove struct {
	e    Entry
	kept bool // already among entries
}

func (s *sparseSave) walk(opts WalkOptions) (*Tree, error) {
	tree, err := walkMerged(s.ctx, s.root, opts, s.parent.each, s.one)
	if err != nil {
		return nil, err
	}
	s.hdr.TreeHash = s.th.sum()
	return tree, nil
}

// sparseWalk walks the tree at root merged with parent (a sparseSave),
// refusing it past limits; opts gives the sizes tests set.
func sparseWalk(ctx context.Context, root string, walk WalkOptions, parent *Manifest, limits Limits, opts CreateOptions) (*sparseSave, *Tree, error) {
	s := &sparseSave{settler: settler{ctx: ctx, root: root, parent: parent, keep: func(h string) string { return h }, hashAll: true, same: true},
		limits: limitCount{l: limits}, entries: make([]Entry, 0, 64), r: &recall{whole: true}}
	s.settler.resized, s.settler.budget = &s.resizedBytes, max(cmp.Or(opts.hashBudget, changedHashBudget), 0)
	s.most = cmp.Or(opts.layerMost, layerMost)
	tree, err := s.walk(walk)
	if err != nil {
		return nil, nil, err
	}
	if err := s.limits.done(); err != nil {
		return nil, nil, err
	}
	return s, tree, nil
}

// walkMerged walks root as WalkEach does and goes through a snapshot's
// entries (each, in walk order: a manifest's m.each, or an archive's) with
// the walk's, as mergeWith does: fn is called with the entry of each path
// in the snapshot (old) and in the tree (cur), nil where absent. The tree
// is not held: fn must copy what it keeps of either. The Tree it returns
// has no Entries.
func walkMerged(ctx context.Context, root string, opts WalkOptions, each func(fn func(e *Entry) error) error, fn func(old, cur *Entry) error) (*Tree, error) {
	var tree *Tree
	err := mergeFed(ctx, each, func(ctx context.Context, emit func(e *Entry) error) error {
		t, err := WalkEach(ctx, root, opts, emit)
		tree = t
		return err
	}, fn)
	if err != nil {
		return nil, err
	}
	return tree, nil
}

// mergeManifests is mergeWith for a cur that is a manifest, opened with
// OpenManifest or not: its entries are read in a pass of their own beside
// parent's. fn must copy what it keeps of either entry.
func mergeManifests(parent, cur *Manifest, fn func(old, cur *Entry) error) error {
	return mergeFed(context.Background(), parent.each, func(_ context.Context, emit func(e *Entry) error) error {
		return cur.each(func(e *Entry) error {
			c := *e // (the pass's strings are its buffer's: cloned to cross)
			c.Path, c.Hash, c.Link = strings.Clone(e.Path), strings.Clone(e.Hash), strings.Clone(e.Link)
			return emit(&c)
		})
	}, fn)
}

// mergeFed goes through the entries each gives and those produce emits (in
// walk order, each its own to hand on, from a goroutine of its own) as
// mergeWith does.
func mergeFed(ctx context.Context, each func(fn func(e *Entry) error) error, produce func(ctx context.Context, emit func(e *Entry) error) error, fn func(old, cur *Entry) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks, free := make(chan []Entry, 4), make(chan []Entry, 6)
	produced := make(chan error, 1)
	go func() {
		defer close(chunks)
		buf := make([]Entry, 0, walkChunk)
		send := func() error {
			select {
			case chunks <- buf:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case buf = <-free:
			default:
				buf = make([]Entry, 0, walkChunk)
			}
			return nil
		}
		err := produce(ctx, func(e *Entry) error {
			if buf = append(buf, *e); len(buf) == cap(buf) {
				return send()
			}
			return nil
		})
		if err == nil && len(buf) > 0 {
			err = send()
		}
		produced <- err
	}()
	c := chunkCursor{ch: chunks, free: free}
	err := mergeCursor(each, &c, fn)
	if err != nil {
		cancel()
	}
	for range chunks { // (the producer winds down)
	}
	if perr := <-produced; perr != nil && err == nil {
		err = perr
	}
	return err
}

// walkChunk is how many entries the walk hands the merge at once.
const walkChunk = 1024

// chunkCursor reads the walk's entries from its chunks, one at a time.
type chunkCursor struct {
	ch   chan []Entry
	free chan []Entry
	cur  []Entry
	i    int
}

// peek returns the next entry, nil at the end; it is valid until the peek
// after next.
func (c *chunkCursor) peek() *Entry {
	for c.i >= len(c.cur) {
		if c.cur != nil {
			select {
			case c.free <- c.cur[:0]:
			default:
			}
		}
		next, ok := <-c.ch
		if !ok {
			c.cur, c.i = nil, 0
			return nil
		}
		c.cur, c.i = next, 0
	}
	return &c.cur[c.i]
}

func (c *chunkCursor) next() { c.i++ }

// mergeCursor is mergeWith over the entries each gives and those c reads.
func mergeCursor(each func(fn func(e *Entry) error) error, c *chunkCursor, fn func(old, cur *Entry) error) error {
	err := each(func(o *Entry) error {
		e := c.peek()
		for ; e != nil && comparePaths(e.Path, o.Path) < 0; e = c.peek() {
			c.next()
			if err := fn(nil, e); err != nil {
				return err
			}
		}
		if e != nil && e.Path == o.Path {
			c.next()
			return fn(o, e)
		}
		return fn(o, nil)
	})
	if err != nil {
		return err
	}
	for e := c.peek(); e != nil; e = c.peek() {
		c.next()
		if err := fn(nil, e); err != nil {
			return err
		}
	}
	return nil
}

// one settles the pair the merge met: the parent's entry p and the fresh e
// (either nil when absent).
func (s *sparseSave) one(p, e *Entry) error {
	if s.n++; s.n&1023 == 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	if e != nil {
		if err := s.settle(p, e); err != nil {
			return err
		}
		if err := s.limits.add(e); err != nil {
			return err
		}
		s.hdr.count(e)
		s.th.add(e)
		if e.Kind == KindFile && e.Hash == "" {
			s.stale = true
		}
	} else {
		s.same = false
	}
	at := p
	if e != nil {
		at = e
	}
	s.above(at.Path)
	differs := p == nil || e == nil || !e.same(p)
	if differs {
		for i := range s.folders {
			if f := &s.folders[i]; !f.kept {
				f.kept = true
				s.entries = append(s.entries, f.e)
			}
		}
		if e != nil {
			k := *e
			k.Hash = strings.Clone(e.Hash)
			s.entries = append(s.entries, k)
		}
		s.r.note(p, e)
		if len(s.entries)+len(s.r.old) > s.most {
			return ErrLayerTooBig
		}
	}
	if e != nil && e.Kind == KindDir {
		s.folders = append(s.folders, folderAbove{e: *e, kept: differs})
	}
	return nil
}

// above pops the folders that do not hold path.
func (s *sparseSave) above(path string) {
	for n := len(s.folders); n > 0; n-- {
		f := s.folders[n-1].e.Path
		if len(path) > len(f) && path[len(f)] == '/' && strings.HasPrefix(path, f) {
			return
		}
		s.folders = s.folders[:n-1]
	}
}

// figures takes the counts and tree hash of the tree the layer describes,
// the parent with kept laid over it, when the archive found a file other
// than the walk did (or the walk did not hash one).
func (s *sparseSave) figures(kept []Entry) (ManifestHeader, error) {
	var h ManifestHeader
	var th treeHasher
	add := func(e *Entry) {
		h.count(e)
		th.add(e)
	}
	touched := map[string]bool{} // paths whose parent entry is not the tree's
	for _, p := range s.r.differs {
		touched[p] = true
	}
	for i := range s.r.old {
		touched[s.r.old[i].Path] = true
	}
	j := 0
	err := s.parent.each(func(o *Entry) error {
		for ; j < len(kept) && comparePaths(kept[j].Path, o.Path) < 0; j++ {
			add(&kept[j])
		}
		if j < len(kept) && kept[j].Path == o.Path {
			add(&kept[j])
			j++
			return nil
		}
		if !touched[o.Path] {
			add(o)
		}
		return nil
	})
	if err != nil {
		return h, err
	}
	for ; j < len(kept); j++ {
		add(&kept[j])
	}
	h.TreeHash = th.sum()
	return h, nil
}
