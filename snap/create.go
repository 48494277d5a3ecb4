package snap

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/snap/gzmember"
)

// CreateOptions adjust Create. Walk, Tree, Adopt and ManifestTo choose how
// the tree is taken; the others what is written of it.
type CreateOptions struct {
	// Walk adjusts Create's walk of root. It is refused with Tree, which
	// was walked already.
	Walk WalkOptions
	// Tree is root as a Walk of it found it: Create snapshots it without
	// walking root again, and its Result's Manifest holds every entry. A
	// caller can so read a parent manifest while the tree is walked. The
	// snapshot takes over Tree.Entries (their hashes and locations are
	// filled in place): the caller must not use them after.
	Tree *Tree
	// Adopt, with Tree, is the index of the full snapshot archive a
	// restore into an empty folder just read (RestoreOptions.Index):
	// that archive becomes the snapshot's own at Out instead of the files
	// being read and compressed again. It is handed over, linked where it
	// can be, so the caller may remove it but must not change it after.
	// Where the archive does not hold the tree exactly, or with Parent,
	// Create returns ErrNotAdoptable with nothing written. Adopt without
	// Tree is refused.
	Adopt *ArchiveIndex
	// ManifestTo, without Tree, is the file a full snapshot written as the
	// walk goes writes its manifest to, line by line, so that it is never
	// held: the Result's Manifest then has no Entries, and its File is
	// ManifestTo. A layer's manifest, and that of a tree found unchanged,
	// is known only at the end: the caller writes it (WriteManifestFile).
	// ManifestTo is refused with Tree, and with Parent and Layer.
	ManifestTo string
	// Out is the archive to write. When Parent is set, Layer is not, and the
	// tree has not changed, nothing is written there.
	Out string
	// Parent is the manifest of the previous snapshot, if any: with it an
	// unchanged tree is detected from metadata without reading file contents
	// (files whose metadata is racy are hashed).
	Parent *Manifest
	// Layer writes only what changed since Parent (read from disk with
	// ReadManifest, so its file and archive are known): new and changed
	// files, and whiteouts for what is gone, over Parent's chain. A chain
	// deeper than MaxDepth, or whose layers together outgrow its full
	// snapshot, gets a full snapshot instead.
	Layer    bool
	MaxDepth int // default 256
	// Reuse, with Parent read from a file, writes nothing when every entry
	// still matches Parent's metadata exactly (no file needed hashing): the
	// Result is Unchanged and Reused, and its Manifest is Parent itself, so
	// the caller can point at Parent's manifest and archive. A layer chain
	// then does not grow by an empty layer at every unchanged snapshot.
	Reuse bool
	// Level is the gzip level; 0 means fastest (1).
	Level int
	// Limits the tree must stay within (zero fields: DefaultLimits's); they
	// are recorded in the manifest when they differ from the defaults.
	Limits Limits

	// Set by tests to force a path the production sizes reach only over
	// large trees; zero is the production value.
	hashBudget int64 // instead of changedHashBudget; below zero, none
	layerMost  int   // instead of layerMost
	recallMax  int   // instead of recallMax
	fullBatch  int   // instead of fullBatch
}

// DefaultMaxDepth bounds a layer chain.
const DefaultMaxDepth = 256

// Result describes a snapshot that was written, or found unchanged.
type Result struct {
	Type            string   `json:"type"`
	Files           int      `json:"files"`
	Dirs            int      `json:"dirs"`
	Symlinks        int      `json:"symlinks"`
	Bytes           int64    `json:"bytes"`
	CompressedBytes int64    `json:"compressed_bytes"`
	TreeHash        string   `json:"tree_hash"`
	Unchanged       bool     `json:"unchanged"`
	Reused          bool     `json:"reused,omitempty"` // nothing written: Manifest is the parent's (CreateOptions.Reuse)
	Archive         string   `json:"archive,omitempty"`
	Layer           bool     `json:"layer"`
	Depth           int      `json:"depth"`
	LayerFiles      int      `json:"layer_files"`          // files whose content this archive holds
	Skipped         []string `json:"skipped,omitempty"`    // sockets, FIFOs, devices
	Unreadable      []string `json:"unreadable,omitempty"` // could not be read: not in the snapshot, and a restore leaves them alone
	// Manifest describes the tree as captured (with content hashes). Where
	// Create held the tree (CreateOptions.Tree) it holds every entry; a
	// layer written as the walk goes holds only what differs from the
	// parent (Encode it over the parent); a full snapshot written as the
	// walk goes holds none (see CreateOptions.ManifestTo).
	Manifest *Manifest `json:"-"`
}

// Create snapshots the tree at root into the archive opts.Out.
//
// Without opts.Tree, Create walks root itself (with opts.Walk) and writes
// as the walk goes, in memory that does not grow with the tree. Without
// opts.Parent that is a full snapshot (see opts.ManifestTo). With a parent
// opened with OpenManifest and opts.Layer, the walk is compared with the
// parent as it goes and only what differs is kept, to be written as a
// layer; where no layer can be laid (a parent read whole, a chain too deep
// or too large) the tree is walked whole and snapshotted as with opts.Tree.
// Over a tree that differs from the parent in too many entries to hold,
// it writes nothing and returns ErrLayerTooBig: the caller then takes a
// full snapshot. With a parent opened with OpenManifest and no layer, an
// unchanged tree writes no archive and a changed one is written whole.
// A parent read whole (ReadManifest) without a layer is refused: the
// caller walks the tree and passes opts.Tree.
//
// With opts.Tree, Create snapshots that tree, held whole, as a layer over
// opts.Parent where one applies, else in full; with opts.Adopt it takes
// the archive a restore just read as the snapshot instead.
func Create(ctx context.Context, root string, opts CreateOptions) (*Result, error) {
	switch {
	case opts.Adopt != nil && opts.Tree == nil:
		return nil, errors.New("snap: CreateOptions.Adopt takes the tree the restore wrote, walked (Tree)")
	case opts.Tree != nil && opts.ManifestTo != "":
		return nil, errors.New("snap: CreateOptions.ManifestTo is written as Create walks the tree, and Tree was walked already")
	case opts.Tree != nil && (len(opts.Walk.Ignore) > 0 || opts.Walk.Entries != 0 || opts.Walk.Now != nil):
		return nil, errors.New("snap: CreateOptions.Walk adjusts Create's own walk, and Tree was walked already")
	case opts.Adopt != nil:
		return createFromArchive(ctx, opts.Tree, opts.Adopt, opts)
	case opts.Tree != nil:
		return createFromTree(ctx, root, opts.Tree, opts)
	case opts.Parent == nil:
		return createFull(ctx, root, opts.Walk, opts, opts.ManifestTo)
	case opts.Layer && opts.ManifestTo != "":
		return nil, errors.New("snap: a layer's manifest is written over its parent once the layer is known (WriteManifestFile), not as the walk goes (CreateOptions.ManifestTo)")
	case opts.Layer:
		return createOver(ctx, root, opts.Walk, opts)
	case opts.Parent.stream == nil:
		return nil, errors.New("snap: a full snapshot compared with its parent as the walk goes takes a parent opened with OpenManifest; with one read whole, walk the tree and pass CreateOptions.Tree")
	default:
		return createOverFull(ctx, root, opts.Walk, opts, opts.ManifestTo)
	}
}

// createFromTree snapshots the tree at root as a Walk of it found it
// (with the caller's WalkOptions). A caller with a parent
// manifest to read can read it while the tree is walked, which is most of
// an unchanged snapshot's time. The snapshot takes over tree.Entries (their
// hashes and locations are filled in place): the caller must not use them
// after.
func createFromTree(ctx context.Context, root string, tree *Tree, opts CreateOptions) (*Result, error) {
	scanStarted := tree.Started
	limits := opts.Limits.Or(DefaultLimits)
	if err := limits.check(tree.Entries); err != nil {
		return nil, err
	}
	var recorded *Limits
	if limits != DefaultLimits {
		recorded = &limits
	}
	out := opts.Out
	var err error
	if out != "" {
		if out, err = filepath.Abs(out); err != nil {
			return nil, err
		}
	}
	layer := opts.Layer && opts.Parent != nil && opts.Parent.File != "" && opts.Parent.Header.Archive != "" && layerFits(opts.Parent, opts.MaxDepth)
	unchanged := false
	if opts.Parent != nil {
		var exact bool
		if unchanged, exact, err = inherit(ctx, root, tree.Entries, opts.Parent, layer, cmp.Or(opts.recallMax, recallMax)); err != nil {
			return nil, err
		}
		if !slices.Equal(sortedUnion(tree.Unreadable, nil), opts.Parent.Header.Unreadable) || !sameRules(opts.Parent.Header.Rules, tree.Rules) {
			unchanged, exact = false, false // what could not be read, or the rules, changed
		}
		if exact && opts.Reuse && opts.Parent.File != "" && limitsOf(opts.Parent) == limits {
			res := resultFor(opts.Parent, tree, true, "")
			res.Reused, res.Layer = true, opts.Parent.Header.Parent != ""
			return res, nil
		}
		if unchanged && !opts.Layer {
			m := newManifest(tree.Entries, scanStarted)
			m.sizes = opts.Parent.sizes
			m.Header.CompressedBytes = opts.Parent.Header.CompressedBytes
			m.Header.Archive = opts.Parent.Header.Archive
			m.Header.Limits = recorded
			m.Header.Unreadable = sortedUnion(tree.Unreadable, nil)
			m.Header.Rules = &tree.Rules
			return resultFor(m, tree, true, ""), nil
		}
	}
	if out == "" {
		return nil, ErrNoArchive
	}
	var parent *Manifest
	if layer {
		parent = opts.Parent
	}
	entries, lost, compressed, err := writeArchive(ctx, root, out, tree.Entries, parent, opts.Level, limits)
	if err != nil {
		return nil, err
	}
	m := newManifest(entries, scanStarted)
	m.wrote(out, compressed, tree, lost, recorded, parent)
	res := resultFor(m, tree, unchanged, out)
	res.Layer = layer
	return res, nil
}

// wrote fills in the header of m, the manifest of the archive out of
// compressed bytes just written for tree (lost: the files it could not
// read), a layer over parent or, with parent nil, a full snapshot.
func (m *Manifest) wrote(out string, compressed int64, tree *Tree, lost []string, recorded *Limits, parent *Manifest) {
	m.sizes = map[string]int64{out: compressed}
	m.Header.Limits = recorded
	m.Header.Unreadable = sortedUnion(tree.Unreadable, lost)
	m.Header.Rules = &tree.Rules
	m.Header.CompressedBytes = compressed
	m.Header.Archive = out
	if parent == nil {
		m.Header.BaseCompressed = compressed
		return
	}
	for a, size := range parent.sizes {
		m.sizes[a] = size
	}
	p := parent.Header
	m.Header.Parent, m.Header.Depth = parent.File, p.Depth+1
	m.Header.BaseCompressed = p.BaseCompressed
	if p.Depth == 0 {
		m.Header.BaseCompressed = p.CompressedBytes
	}
	m.Header.ChainCompressed = p.ChainCompressed + compressed
}

func resultFor(m *Manifest, tree *Tree, unchanged bool, archive string) *Result {
	r := &Result{
		Type: "snapshot", Files: m.Header.Files, Dirs: m.Header.Dirs, Symlinks: m.Header.Symlinks,
		Bytes: m.Header.Bytes, CompressedBytes: m.Header.CompressedBytes, TreeHash: m.Header.TreeHash,
		Unchanged: unchanged, Archive: archive, Depth: m.Header.Depth, Skipped: tree.Special, Manifest: m,
		Unreadable: m.Header.Unreadable,
	}
	for i := range m.Entries {
		if m.Entries[i].Kind == KindFile && m.Entries[i].Src == archive && archive != "" {
			r.LayerFiles++
		}
	}
	return r
}

// inherit compares fresh entries with the parent manifest and reports
// whether the tree is unchanged, and whether it is so exactly: unchanged
// without hashing a file, so the parent's metadata is still current. Each
// entry is settled as settler.settle says, with hashAll (a layer's). With
// hashAll, it leaves on a parent read as it goes a recall of what differs,
// which the layer's passes after it read instead, of at most most entries
// (recallMax).
func inherit(ctx context.Context, root string, entries []Entry, parent *Manifest, hashAll bool, most int) (unchanged, exact bool, err error) {
	st := settler{ctx: ctx, root: root, parent: parent, keep: parent.keeper(), hashAll: hashAll, same: true}
	n := 0
	parent.recall = nil
	var r *recall
	if hashAll && parent.stream != nil && len(entries) > 0 {
		r = &recall{first: &entries[0], most: most}
	}
	err = mergeWith(parent, entries, func(p, e *Entry) error {
		if n++; n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var err error
		if e == nil {
			st.same = false // a path removed
		} else {
			err = st.settle(p, e)
		}
		if r != nil {
			r.note(p, e)
		}
		return err
	})
	if err != nil {
		return false, false, err
	}
	parent.recall = r
	return st.same, st.same && !st.hashed, nil
}

// A settler settles fresh entries against their parent's, one at a time,
// and keeps whether the tree is the same so far (same) and whether a file
// had to be hashed to tell (hashed).
type settler struct {
	ctx    context.Context
	root   string
	parent *Manifest
	keep   func(string) string // what a parent's string kept in an entry goes through (see keeper)
	// hashAll hashes every file of its parent's size, not only until the
	// first change is found (a full snapshot reads every file anyway);
	// resized, when not nil, hashes new and resized files too, while the
	// bytes it counts stay within budget (changedHashBudget).
	hashAll bool
	resized *int64
	budget  int64

	same, hashed bool
}

// settle settles the fresh entry e, whose parent's entry is p (nil when
// new). A file whose metadata proves it untouched (and was not racy at the
// parent's scan) takes the parent's hash and content location; one of the
// same size is hashed, and takes the parent's location too when its
// content is the same. A file that cannot be read now is left for the
// archive, which records what it finds.
func (s *settler) settle(p, e *Entry) error {
	if p == nil {
		s.same = false
	}
	if e.Kind != KindFile {
		if p == nil || !e.sameContent(p) {
			s.same = false
		}
		return nil
	}
	if p != nil && p.Kind == KindFile && e.sameStat(p) && !s.parent.racy(p) {
		e.Hash, e.Src, e.COff, e.Skip = s.keep(p.Hash), p.Src, p.COff, p.Skip
		return nil
	}
	resized := p == nil || p.Kind != KindFile || p.Size != e.Size
	switch {
	case resized:
		s.same = false
		if s.resized == nil || *s.resized+e.Size > s.budget {
			return nil
		}
		*s.resized += e.Size
	case !s.same && !s.hashAll:
		return nil
	}
	s.hashed = true
	h, err := hashFile(s.ctx, filepath.Join(s.root, filepath.FromSlash(e.Path)))
	if err != nil {
		if s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		if changed(err) || unreadableErr(err) {
			s.same = false // the archive looks at it again, and records what it finds
			return nil
		}
		return err
	}
	e.Hash = h
	if !resized && h == p.Hash {
		e.Hash, e.Src, e.COff, e.Skip = s.keep(p.Hash), p.Src, p.COff, p.Skip
		if e.Mode != p.Mode {
			s.same = false
		}
		return nil
	}
	s.same = false
	return nil
}

// changedHashBudget bounds the bytes of new and resized files a settler
// with resized set hashes. Tests set another (CreateOptions.hashBudget).
const changedHashBudget int64 = 64 << 20

// sameRules reports whether recorded rules are r, as a manifest holds them.
func sameRules(recorded *Rules, r Rules) bool {
	if recorded == nil {
		return false
	}
	a, err1 := json.Marshal(recorded)
	b, err2 := json.Marshal(&r)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// sortedUnion returns the paths of a and b, sorted, without repeats; nil
// when there are none.
func sortedUnion(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

func hashFile(ctx context.Context, name string) (string, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	buf := copyBuffers.Get().(*[]byte) // (io.Copy would make one a file)
	defer copyBuffers.Put(buf)
	if _, err := io.CopyBuffer(h, ctxio.Reader{Ctx: ctx, R: f}, *buf); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Whiteouts mark, in a layer, what is gone since the parent (the scheme of
// OCI image layers): an empty file .wh.<name> beside the removed name, and
// .wh..wh..opq inside a folder whose parent-layer contents must not show
// through. A restore reads a layer through its manifest, never through its
// whiteouts, which are there for other readers; so a file of the user's
// with a whiteout's name is a file, and a whiteout that would share a name
// with a file the same layer holds is left out (an archive never holds one
// name twice). Whether an archive is a layer is not told from its names but
// from its mark (archiveMark).
const (
	whiteoutPrefix = ".wh."
	opaqueMarker   = ".wh..wh..opq"
)

// markField is the RFC 1952 extra subfield, in the first gzip member's
// header of every archive rewind-snap writes, that says whether the archive
// is a full snapshot or a layer. gzip and tar ignore it.
var markField = [2]byte{'R', 'w'}

// archiveMark is the gzip header extra field of a full snapshot's archive,
// or of a layer's.
func archiveMark(layer bool) []byte {
	kind := "full"
	if layer {
		kind = "layer"
	}
	return append([]byte{markField[0], markField[1], byte(len(kind)), 0}, kind...)
}

// archiveKind reads the mark from a gzip header extra field: "full",
// "layer", or "" for an archive without one (written by an older
// rewind-snap, or by another tool).
func archiveKind(extra []byte) string {
	for len(extra) >= 4 {
		n := int(extra[2]) | int(extra[3])<<8
		if 4+n > len(extra) {
			return ""
		}
		if extra[0] == markField[0] && extra[1] == markField[1] {
			return string(extra[4 : 4+n])
		}
		extra = extra[4+n:]
	}
	return ""
}

// writeArchive writes entries as a tar.gz at out (atomically) and returns
// them (in entries' own array) with content hashes, locations and metadata
// as read, dropping files that vanished since the walk, and the files it
// could not read (lost), which it leaves out too. With parent (a layer),
// files that already carry a location (inherited) are not written, nor are
// unchanged folders and symlinks; whiteouts record what the parent has and
// the tree lost. Small files are read and hashed ahead by workers while the
// main loop feeds the compressor, which compresses members on their own
// goroutines.
func writeArchive(ctx context.Context, root, out string, entries []Entry, parent *Manifest, level int, limits Limits) (kept []Entry, lost []string, compressed int64, err error) {
	a, err := newArchiveWriter(out, level, parent != nil)
	if err != nil {
		return nil, nil, 0, err
	}
	defer a.abort()
	var plan []tarItem
	if parent != nil {
		if plan, err = layerPlan(entries, parent); err != nil {
			return nil, nil, 0, err
		}
	}
	if kept, err = a.add(ctx, root, entries, plan, parent == nil); err != nil {
		return nil, nil, 0, err
	}
	if err := a.close(); err != nil {
		return nil, nil, 0, err
	}
	for i := range kept {
		if e := &kept[i]; e.Kind == KindFile && e.Src == out {
			e.COff = a.start(e.COff)
		}
	}
	// Files may have grown since the walk: what the archive holds must
	// still be within the limits a restore enforces.
	if err := limits.check(kept); err != nil {
		return nil, nil, 0, err
	}
	if err := a.f.Commit(); err != nil {
		return nil, nil, 0, err
	}
	return kept, a.lost, a.cw.N, nil
}

// An archiveWriter writes a snapshot's tar.gz at out, a batch of entries
// at a time (add), in walk order. Until it is closed, the COff of a file
// written here is the number of its gzip member, not yet its offset
// (start turns one into the other).
type archiveWriter struct {
	out  string
	f    *durable.File
	cw   *ctxio.CountingWriter
	mw   *gzmember.Writer
	tw   *tar.Writer
	buf  []byte
	lost []string // files it could not read

	uid, gid int
}

func newArchiveWriter(out string, level int, layer bool) (*archiveWriter, error) {
	if level == 0 {
		level = gzip.BestSpeed
	}
	f, err := durable.Create(out, layout.FileMode)
	if err != nil {
		return nil, err
	}
	a := &archiveWriter{out: out, f: f, cw: &ctxio.CountingWriter{W: newWritebackWriter(f.File)}, buf: make([]byte, 256*1024), uid: os.Getuid(), gid: os.Getgid()}
	a.mw = gzmember.NewWriter(a.cw, level, archiveMark(layer))
	a.tw = tar.NewWriter(a.mw)
	return a, nil
}

// abort removes what was written, unless it was committed.
func (a *archiveWriter) abort() { a.f.Abort() }

// close ends the archive (not yet committed).
func (a *archiveWriter) close() error {
	if err := a.tw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", a.out, err)
	}
	if err := a.mw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", a.out, err)
	}
	return nil
}

// start is the offset of gzip member n, once the archive is closed.
func (a *archiveWriter) start(n int64) int64 { return a.mw.Start(int(n)) }

// add writes entries (all of them, or what plan lists) and returns them,
// in entries' own array, as the archive found them: the files it could not
// read or that vanished are dropped (the first are added to lost).
func (a *archiveWriter) add(ctx context.Context, root string, entries []Entry, plan []tarItem, all bool) (kept []Entry, err error) {
	out, tw, mw := a.out, a.tw, a.mw
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A full snapshot writes every entry: its plan is not spelt out.
	items := len(entries)
	item := func(n int) tarItem { return tarItem{entry: n, write: true} }
	if !all {
		items, item = len(plan), func(n int) tarItem { return plan[n] }
	}
	// Each file written here is read once: the prefetcher takes the small
	// ones, in plan order, which is walk order.
	written, bytes := filesWritten(entries, items, item)
	w := 0
	pre := startPrefetch(ctx, root, entries, func(i int) bool {
		for w < len(written) && int(written[w]) < i {
			w++
		}
		return w < len(written) && int(written[w]) == i
	})
	progress := progressFrom(ctx)
	progress.Begin()
	progress.Expect(int64(len(written)), bytes)
	// The entries are updated in place (what the archive found, where the
	// content is); those the archive lost are dropped at the end.
	drop := make([]bool, len(entries))
	for n := range items {
		it := item(n)
		if n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if it.whiteout != "" || it.header {
			if err := a.headerOnly(it, entries); err != nil {
				return nil, err
			}
			continue
		}
		i := it.entry
		e := &entries[i]
		if !it.write {
			continue
		}
		hdr := &tar.Header{Name: e.Path, Mode: int64(e.Mode), ModTime: time.Unix(0, e.MTime), Uid: a.uid, Gid: a.gid}
		switch e.Kind {
		case KindDir:
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		case KindSymlink:
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = e.Link
		case KindFile:
			if err := tw.Flush(); err != nil { // pad the previous entry, so the offset is this header's
				return nil, fmt.Errorf("write %s: %w", out, err)
			}
			member, skip := mw.Offset()
			loss, err := pre.write(ctx, i, tw, hdr, e, a.buf)
			if err != nil {
				return nil, err
			}
			switch loss {
			case fileRead:
				e.Src, e.COff, e.Skip = out, int64(member), skip
				progress.Add(1, e.Size)
			case fileUnreadable:
				a.lost = append(a.lost, e.Path)
				drop[i] = true
			default:
				drop[i] = true
			}
			continue
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("write %s: %w", out, err)
		}
	}
	kept = entries
	if slices.Contains(drop, true) {
		kept = kept[:0]
		for i := range entries {
			if !drop[i] {
				kept = append(kept, entries[i])
			}
		}
	}
	return kept, nil
}

// filesWritten are the indexes of the files among the items written, in order, and their
// bytes.
func filesWritten(entries []Entry, items int, item func(int) tarItem) ([]int32, int64) {
	written := make([]int32, 0, 64)
	var bytes int64
	for n := range items {
		if it := item(n); it.write && it.whiteout == "" && entries[it.entry].Kind == KindFile {
			written = append(written, int32(it.entry))
			bytes += entries[it.entry].Size
		}
	}
	return written, bytes
}

// headerOnly writes an item that is a header alone: a whiteout, or a folder written only so
// the layer extracts on its own.
func (a *archiveWriter) headerOnly(it tarItem, entries []Entry) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: it.whiteout, Mode: 0o644, ModTime: time.Now(), Uid: a.uid, Gid: a.gid}
	if it.whiteout == "" {
		e := &entries[it.entry]
		hdr = &tar.Header{Typeflag: tar.TypeDir, Name: e.Path + "/", Mode: int64(e.Mode), ModTime: time.Unix(0, e.MTime), Uid: a.uid, Gid: a.gid}
	}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("write %s: %w", a.out, err)
	}
	return nil
}

// tarItem is one thing a layer's tar holds: an entry, only the header of
// a folder, or a whiteout name.
type tarItem struct {
	entry    int
	write    bool // the entry
	header   bool // only the folder's header: the parent of something included
	whiteout string
}

// layerPlan lists, in walk order, what a layer over parent holds: changed
// and new entries (the others are in its manifest only), the folders above
// them, and whiteouts for what the parent has and the tree lost (the
// topmost gone path only).
func layerPlan(entries []Entry, parent *Manifest) ([]tarItem, error) {
	var plan []tarItem
	dirs := map[string]int{}
	for i := range entries {
		if entries[i].Kind == KindDir {
			dirs[entries[i].Path] = i
		}
	}
	var gone []string // topmost removed paths, to skip what lies under them
	written := map[string]bool{}
	var addParents func(p string)
	addParents = func(p string) {
		d := path.Dir(p)
		if d == "." || written[d] {
			return
		}
		addParents(d)
		written[d] = true
		if i, ok := dirs[d]; ok {
			plan = append(plan, tarItem{entry: i, header: true})
		}
	}
	idx := 0
	keep := parent.keeper()
	err := mergeWith(parent, entries, func(old, cur *Entry) error {
		if cur == nil {
			for _, g := range gone {
				if strings.HasPrefix(old.Path, g+"/") {
					return nil
				}
			}
			p := keep(old.Path)
			gone = append(gone, p)
			addParents(p)
			plan = append(plan, tarItem{whiteout: path.Join(path.Dir(p), whiteoutPrefix+path.Base(p))})
			return nil
		}
		i := idx
		idx++
		if old != nil && old.Kind == KindDir && cur.Kind != KindDir {
			gone = append(gone, cur.Path) // a file or link replaces the folder, and all under it
		}
		var changed bool
		switch {
		case cur.Kind == KindFile:
			// A file with a location inherits its content (a mode change lives
			// in the manifest); one without is new or changed.
			changed = cur.Src == ""
		default:
			changed = old == nil || old.Kind != cur.Kind || old.Mode != cur.Mode || old.Link != cur.Link
		}
		if !changed {
			return nil // (in the manifest, not in this archive)
		}
		addParents(cur.Path)
		written[cur.Path] = true
		plan = append(plan, tarItem{entry: i, write: true})
		if cur.Kind == KindDir && old != nil && old.Kind != KindDir {
			plan = append(plan, tarItem{whiteout: cur.Path + "/" + opaqueMarker})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A whiteout never shares its name with an entry of the same layer.
	return slices.DeleteFunc(plan, func(it tarItem) bool { return it.whiteout != "" && written[it.whiteout] }), nil
}

const (
	prefetchFiles = 32        // files read ahead of the writer at most
	prefetchMax   = 256 << 10 // larger files are streamed by the writer itself (so at most 8 MiB ahead)
)

// prefetcher reads and hashes small files ahead of the archive writer.
// The writer takes the files in walk order, and no more than
// prefetchFiles are read ahead of it, so the k-th file read ahead has slot
// k % prefetchFiles to itself until the writer takes it: what it costs
// does not grow with the tree.
type prefetcher struct {
	root  string
	todo  []int32 // the entries read ahead, in walk order
	next  int     // todo[next] is the next one the writer takes
	slots [prefetchFiles]chan prefetched
	ahead chan struct{} // one token per file read ahead
	pool  sync.Pool
}

type prefetched struct {
	data  *[]byte
	fresh Entry // metadata of the open file (no path)
	hash  [sha256.Size]byte
	lost  fileLoss
	err   error
}

// fileLoss says why a file the walk listed is not in the archive.
type fileLoss uint8

const (
	fileRead       fileLoss = iota
	fileVanished            // gone since the walk, or no longer a file: the tree is changing
	fileUnreadable          // the save may not read it (or the disk would not): recorded as such
)

func startPrefetch(ctx context.Context, root string, entries []Entry, read func(i int) bool) *prefetcher {
	p := &prefetcher{root: root, ahead: make(chan struct{}, prefetchFiles)}
	for k := range p.slots {
		p.slots[k] = make(chan prefetched, 1)
	}
	// Every buffer holds the largest file read ahead, so none is ever
	// reallocated: fresh heap pages cost a fault each, and a buffer only
	// touches the pages its files fill.
	p.pool.New = func() any { b := make([]byte, 0, prefetchMax+1); return &b }
	// Which files are read ahead is fixed before any goroutine starts.
	for i := range entries {
		if read(i) && entries[i].Size <= prefetchMax {
			p.todo = append(p.todo, int32(i))
		}
	}
	type job struct{ k, i int }
	jobs := make(chan job, prefetchFiles)
	go func() {
		defer close(jobs)
		for k, i := range p.todo {
			select {
			case p.ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{k, int(i)}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range runtime.GOMAXPROCS(0) {
		go func() {
			for j := range jobs {
				p.slots[j.k%prefetchFiles] <- p.read(&entries[j.i])
			}
		}()
	}
	return p
}

// read reads and hashes one small file (through a rawFile: on Unix raw
// system calls, see openRaw).
func (p *prefetcher) read(e *Entry) (s prefetched) {
	f, err := openRaw(filepath.Join(p.root, filepath.FromSlash(e.Path)))
	if err != nil {
		if s.lost = lossOf(err); s.lost == fileRead {
			s.err = fmt.Errorf("read %s: %w", e.Path, err)
		}
		return s
	}
	defer f.close()
	if s.fresh, err = f.stat(e.Path); err != nil {
		s.err = fmt.Errorf("stat %s: %w", e.Path, err)
		return s
	}
	s.fresh.Path = ""
	if s.fresh.Kind != KindFile {
		s.lost = fileVanished
		return s
	}
	bp := p.pool.Get().(*[]byte)
	b := (*bp)[:0]
	if want := int(s.fresh.Size) + 1; cap(b) < want && want <= prefetchMax+1 {
		b = make([]byte, 0, want)
	}
	// Read to EOF: the content is what the archive holds, even if the file
	// changed size since the stat.
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.read(b[len(b):cap(b)])
		if err != nil {
			if s.lost = lossOf(err); s.lost == fileRead {
				s.err = fmt.Errorf("read %s: %w", e.Path, err)
			}
			*bp = b[:0]
			p.pool.Put(bp)
			return s
		}
		if n == 0 {
			break
		}
		b = b[:len(b)+n]
	}
	*bp = b
	s.data = bp
	s.hash = sha256.Sum256(b)
	s.fresh.Size = int64(len(b))
	return s
}

// write adds file i to the archive, from the prefetched bytes or by
// streaming it, or says why it is not in it. The writer calls it for the
// files in walk order.
func (p *prefetcher) write(ctx context.Context, i int, tw *tar.Writer, hdr *tar.Header, e *Entry, buf []byte) (fileLoss, error) {
	if p.next >= len(p.todo) || int(p.todo[p.next]) != i {
		return writeFileEntry(ctx, tw, hdr, p.root, e, buf)
	}
	k := p.next
	p.next++
	// Once ctx is done no more files are read ahead: a slot may never
	// fill, so the wait ends with ctx too.
	var s prefetched
	select {
	case s = <-p.slots[k%prefetchFiles]:
	case <-ctx.Done():
		return fileRead, ctx.Err()
	}
	<-p.ahead
	if s.err != nil || s.lost != fileRead {
		return s.lost, s.err
	}
	defer func() {
		*s.data = (*s.data)[:0]
		p.pool.Put(s.data)
	}()
	e.Mode, e.Size, e.MTime, e.CTime, e.Ino, e.Hash = s.fresh.Mode, s.fresh.Size, s.fresh.MTime, s.fresh.CTime, s.fresh.Ino, hex.EncodeToString(s.hash[:])
	hdr.Typeflag = tar.TypeReg
	hdr.Mode = int64(e.Mode)
	hdr.ModTime = time.Unix(0, e.MTime)
	hdr.Size = e.Size
	if err := tw.WriteHeader(hdr); err != nil {
		return fileRead, err
	}
	if _, err := tw.Write(*s.data); err != nil {
		return fileRead, err
	}
	return fileRead, nil
}

// lossOf tells why a file could not be read: it changed under the save, or
// the save may not read it; fileRead for any other error, which fails the save.
func lossOf(err error) fileLoss {
	switch {
	case changed(err):
		return fileVanished
	case unreadableErr(err):
		return fileUnreadable
	}
	return fileRead
}

// unreadableErr reports whether err means a file's content cannot be read
// while the file itself is there: no permission, or an I/O error.
func unreadableErr(err error) bool {
	return denied(err) || ioError(err)
}

// writeFileEntry adds one large file by streaming it. Its header and
// manifest entry take the metadata of the open file, so they describe the
// bytes that were read; or it says why the file is not in the archive.
func writeFileEntry(ctx context.Context, tw *tar.Writer, hdr *tar.Header, root string, e *Entry, buf []byte) (fileLoss, error) {
	name := filepath.Join(root, filepath.FromSlash(e.Path))
	f, err := openNoFollow(name)
	if err != nil {
		if loss := lossOf(err); loss != fileRead {
			return loss, nil
		}
		return fileRead, fmt.Errorf("read %s: %w", e.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileRead, fmt.Errorf("stat %s: %w", e.Path, err)
	}
	if !fi.Mode().IsRegular() {
		return fileVanished, nil // replaced by something else since the walk
	}
	// A read error before the header is written leaves the archive whole:
	// read the first block ahead.
	first := buf[:min(int64(len(buf)), fi.Size())]
	n0, err := io.ReadFull(f, first)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		if loss := lossOf(err); loss != fileRead {
			return loss, nil
		}
		return fileRead, fmt.Errorf("read %s: %w", e.Path, err)
	}
	fresh := entryFromInfo(e.Path, fi)
	e.Mode, e.Size, e.MTime, e.CTime, e.Ino = fresh.Mode, fresh.Size, fresh.MTime, fresh.CTime, fresh.Ino
	hdr.Typeflag = tar.TypeReg
	hdr.Mode = int64(e.Mode)
	hdr.ModTime = time.Unix(0, e.MTime)
	hdr.Size = e.Size
	if err := tw.WriteHeader(hdr); err != nil {
		return fileRead, err
	}
	h := sha256.New()
	h.Write(first[:n0])
	if _, err := tw.Write(first[:n0]); err != nil {
		return fileRead, err
	}
	n, err := io.CopyBuffer(io.MultiWriter(tw, h), io.LimitReader(ctxio.Reader{Ctx: ctx, R: f}, e.Size-int64(n0)), buf)
	if ctx.Err() != nil {
		return fileRead, ctx.Err()
	}
	if err != nil {
		return fileRead, fmt.Errorf("read %s: %w", e.Path, err)
	}
	if int64(n0)+n != e.Size {
		return fileRead, fmt.Errorf("%s shrank while it was being captured (%d of %d bytes); take the snapshot again", e.Path, int64(n0)+n, e.Size)
	}
	e.Hash = hex.EncodeToString(h.Sum(nil))
	return fileRead, nil
}

// writebackEvery is how much an archive grows between two requests to the
// kernel to start writing it to disk.
const writebackEvery = 8 << 20

// writebackWriter asks the kernel to start writing a file to disk as it
// grows (on Linux sync_file_range, without waiting: durable.StartWriteback), so the
// fsync that commits it finds little left to do: on the 37 MB archive of
// GOROOT/src that fsync otherwise waits 15-40 ms with nothing else to do.
// Errors are ignored; durability still comes from the fsync. Where the
// system has no such hint, it only writes.
type writebackWriter struct {
	f       *os.File
	fd      uintptr
	written int64
	started int64 // bytes already handed to writeback
}

func newWritebackWriter(f *os.File) *writebackWriter {
	w := &writebackWriter{f: f}
	if durable.HasWriteback {
		w.fd = f.Fd()
	}
	return w
}

func (w *writebackWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if durable.HasWriteback && w.written-w.started >= writebackEvery {
		durable.StartWriteback(w.fd, w.started, w.written-w.started)
		w.started = w.written
	}
	return n, err
}

// ErrNoArchive is CreateOptions.Out left empty.
var ErrNoArchive = errors.New("no archive named to write")
