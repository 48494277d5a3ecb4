package snap

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"

	"rewind.dev/internal/ctxio"
)

// List calls fn for every entry of the archive, in archive order, after the
// same checks a restore makes; content is skipped, not hashed.
func List(archive string, fn func(e *Entry) error) error {
	return eachEntry(archive, DefaultLimits, func(e *Entry, content io.Reader) error {
		if content != nil {
			if _, err := io.Copy(io.Discard, content); err != nil {
				return archiveReadErr(e, err)
			}
		}
		return fn(e)
	})
}

// eachEntry reads an archive whole, with the checks a restore makes, and
// calls fn for every entry in archive order; content is nil but for files,
// and readable only until fn returns. The archive is checked in walk order,
// as Rewind writes archives, without a map of every path; one that is not
// in that order is read again with the map, past the entries handed on.
func eachEntry(archive string, limits Limits, fn func(e *Entry, content io.Reader) error) error {
	n := 0
	disordered, err := scanEntries(archive, limits, true, func(e *Entry, content io.Reader) error {
		n++
		return fn(e, content)
	})
	if !disordered {
		return err
	}
	i := 0
	_, err = scanEntries(archive, limits, false, func(e *Entry, content io.Reader) error {
		if i++; i <= n {
			return nil // (handed on by the first read)
		}
		return fn(e, content)
	})
	return err
}

// scanEntries is eachEntry's read, checked in walk order or against a map
// of every path; disordered reports an archive the first refused as out
// of walk order.
func scanEntries(archive string, limits Limits, ordered bool, fn func(e *Entry, content io.Reader) error) (disordered bool, err error) {
	as, err := openArchive(archive, limits, Folding{})
	if err != nil {
		return false, err
	}
	defer as.Close()
	as.ordered = ordered
	for {
		e, content, err := as.next()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return as.disordered, err
		}
		if err := fn(e, content); err != nil {
			return false, err
		}
	}
}

// Verifier checks snapshots end to end: every archive a manifest points
// into is read whole once, member by member (each member's gzip checksum,
// the tar structure, the checks a restore makes), and its files hashed;
// then every file entry of the manifest must be in the archive it names, at
// the place it names (the member and how far into it, where a restore
// seeks), with the recorded hash.
//
// What it reads of an archive of up to indexLimit files it keeps (where
// each file is and its hash), so checking many layers of one chain costs
// each archive once; a budget of verifierHeld files bounds what it keeps,
// the oldest dropped first. A larger archive (a big tree's full snapshot)
// is not held: it is read beside a pass over the manifest, both in walk
// order, once per snapshot checked whole.
type Verifier struct {
	index map[string]archiveIndex // archive -> where each file is and what
	errs  map[string]error
	order []string              // the archives index holds, oldest first
	held  int                   // the files index holds
	ahead map[string]*readAhead // archives ReadAhead reads (until Check takes them)

	// Set by tests; zero is the production value.
	limit, most  int                  // instead of indexLimit, verifierHeld
	indexedWhole func(archive string) // told each archive too big to index that checkBig indexes whole after all
}

// indexLimit is the most files of one archive a Verifier keeps the index
// of; verifierHeld the most over all archives. An indexed file costs
// about 120 bytes. Tests set smaller ones (Verifier.limit, Verifier.most).
const (
	indexLimit   = 1 << 15
	verifierHeld = 1 << 17
)

// errTooMany is indexArchive's answer for an archive of more than
// indexLimit files: it is checked as a pass over its manifest goes.
var errTooMany = errors.New("too many files to index")

type placed struct {
	coff, skip int64
	hash       [sha256.Size]byte
}

// archiveIndex is what reading an archive found: its files' paths, sorted,
// each with where it is and its hash. A slice, not a map: a store's
// validate keeps one per archive, mostly of a file or two, and as maps they
// were a quarter of its heap.
type archiveIndex []indexed

type indexed struct {
	path string
	placed
}

// find returns where path is and its hash.
func (x archiveIndex) find(path string) (placed, bool) {
	i, ok := slices.BinarySearchFunc(x, path, func(e indexed, p string) int { return strings.Compare(e.path, p) })
	if !ok {
		return placed{}, false
	}
	return x[i].placed, true
}

// hashIs reports whether hex is the placed file's hash, as a manifest
// spells it (lower-case hex), without a string per file.
func (p *placed) hashIs(hexHash string) bool {
	var b [2 * sha256.Size]byte
	hex.Encode(b[:], p.hash[:])
	return string(b[:]) == hexHash
}

// copyBuffers are the buffers indexArchive and hashFile hash through: one
// per archive was most of what reading thousands of small layers allocated,
// one per file most of what hashing a tree's did.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// NewVerifier returns an empty Verifier.
func NewVerifier() *Verifier {
	return &Verifier{index: map[string]archiveIndex{}, errs: map[string]error{}}
}

// read returns archive's index (errTooMany for one not to hold).
func (v *Verifier) read(ctx context.Context, archive string, limits Limits) (archiveIndex, error) {
	if idx, ok := v.index[archive]; ok {
		return idx, v.errs[archive]
	}
	if a := v.ahead[archive]; a != nil {
		delete(v.ahead, archive)
		if a.claim() { // not started yet: read it here
			a.idx, a.err = indexArchive(ctx, archive, limits, cmp.Or(v.limit, indexLimit))
		} else {
			<-a.done
		}
		v.keep(archive, a.idx, a.err)
		return a.idx, a.err
	}
	idx, err := indexArchive(ctx, archive, limits, cmp.Or(v.limit, indexLimit))
	v.keep(archive, idx, err)
	return idx, err
}

// keep remembers what reading archive found, within the budget.
func (v *Verifier) keep(archive string, idx archiveIndex, err error) {
	v.index[archive], v.errs[archive] = idx, err
	v.order = append(v.order, archive)
	v.held += len(idx)
	for v.held > cmp.Or(v.most, verifierHeld) && len(v.order) > 1 {
		old := v.order[0]
		v.order = v.order[1:]
		v.held -= len(v.index[old])
		delete(v.index, old)
		delete(v.errs, old)
	}
}

// indexArchive reads archive whole and returns where each file is and its
// hash; errTooMany, having read no further, when it holds more than most
// files (most < 0: no bound).
func indexArchive(ctx context.Context, archive string, limits Limits, most int) (archiveIndex, error) {
	var idx archiveIndex
	as, err := openArchiveMembers(archive, limits, Folding{}, false)
	if err == nil {
		defer as.Close()
		h := sha256.New()
		buf := copyBuffers.Get().(*[]byte)
		defer copyBuffers.Put(buf)
		for {
			e, content, nerr := as.next()
			if nerr == io.EOF {
				break
			}
			if nerr != nil {
				err = nerr
				break
			}
			if content == nil {
				continue
			}
			if most >= 0 && len(idx) >= most {
				return nil, errTooMany
			}
			h.Reset()
			if _, cerr := io.CopyBuffer(h, ctxio.Reader{Ctx: ctx, R: content}, *buf); cerr != nil {
				if err = ctx.Err(); err == nil {
					err = archiveReadErr(e, cerr)
				}
				break
			}
			p := indexed{e.Path, placed{coff: e.COff, skip: e.Skip}}
			h.Sum(p.hash[:0])
			idx = append(idx, p)
		}
	}
	// Sorted by path, the last of a path kept (as a restore's last write
	// of it wins).
	slices.SortStableFunc(idx, func(a, b indexed) int { return strings.Compare(a.path, b.path) })
	out := make(archiveIndex, 0, len(idx))
	for i := range idx {
		if i+1 < len(idx) && idx[i+1].path == idx[i].path {
			continue
		}
		out = append(out, idx[i])
	}
	return out, err
}

// Check verifies m: its tree hash, and every file's content in the archive
// that holds it, at the place the manifest records. A manifest opened with
// OpenManifest is read in passes, not held.
func (v *Verifier) Check(ctx context.Context, m *Manifest) error {
	return v.check(ctx, m, m.each)
}

// CheckOwn is Check for a manifest laid over one v has found right, given
// own, its own lines (see ReadManifestDelta): its tree hash over every
// entry, and the content of the files own lists — every other file entry
// is one that manifest has, checked by v against the same archives.
func (v *Verifier) CheckOwn(ctx context.Context, m *Manifest, own []Entry) error {
	return v.check(ctx, m, func(fn func(e *Entry) error) error {
		for i := range own {
			if err := fn(&own[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// check checks m's tree hash and the content of the files among the
// entries each goes through (a pass; it may be called more than once).
func (v *Verifier) check(ctx context.Context, m *Manifest, each func(fn func(e *Entry) error) error) error {
	var th treeHasher
	if err := m.each(func(e *Entry) error { th.add(e); return nil }); err != nil {
		return err
	}
	if got := th.sum(); got != m.Header.TreeHash {
		return fmt.Errorf("manifest tree hash %s does not match its entries (%s)", m.Header.TreeHash, got)
	}
	limits := limitsOf(m)
	big := map[string]*inOrder{} // archives too big to index: read beside a pass of their own
	err := each(func(e *Entry) error {
		if e.Kind != KindFile {
			return nil
		}
		if o := big[e.Src]; o != nil {
			o.add(e)
			return nil
		}
		idx, err := v.read(ctx, e.Src, limits)
		if err == errTooMany {
			o := &inOrder{}
			big[strings.Clone(e.Src)] = o
			o.add(e)
			return nil
		}
		if err != nil {
			return err
		}
		return idx.check(e)
	})
	if err != nil {
		return err
	}
	for _, a := range slices.Sorted(maps.Keys(big)) {
		if err := checkBig(ctx, a, big[a].ordered, limits, each, v.indexedWhole); err != nil {
			return err
		}
	}
	return nil
}

// checkBig checks the file entries each goes through that are in archive,
// one too big to index: read beside a pass when they name their places in
// the archive's order, else (a manifest from before places were recorded,
// an archive not in walk order) indexed whole, however large. whole, when
// set (tests), is told of each archive indexed so.
func checkBig(ctx context.Context, archive string, ordered bool, limits Limits, each func(fn func(e *Entry) error) error, whole func(archive string)) error {
	if ordered {
		if err := checkInOrder(ctx, archive, limits, each); err != errDisordered {
			return err
		}
	}
	if whole != nil {
		whole(archive)
	}
	idx, err := indexArchive(ctx, archive, limits, -1)
	if err != nil {
		return err
	}
	return each(func(e *Entry) error {
		if e.Kind != KindFile || e.Src != archive {
			return nil
		}
		return idx.check(e)
	})
}

// check checks file entry e against the archive x indexes.
func (x archiveIndex) check(e *Entry) error {
	p, ok := x.find(e.Path)
	switch {
	case !ok:
		return fmt.Errorf("%s: not in %s, where its manifest says its content is", e.Path, e.Src)
	case !p.hashIs(e.Hash):
		return fmt.Errorf("%s: content in %s differs from its manifest's hash", e.Path, e.Src)
	case (e.COff != 0 || e.Skip != 0) && (p.coff != e.COff || p.skip != e.Skip): // 0+0: a manifest from before places were recorded, or the first member's start
		return fmt.Errorf("%s: in %s at member %d+%d, where its manifest says %d+%d", e.Path, e.Src, p.coff, p.skip, e.COff, e.Skip)
	}
	return nil
}

// inOrder follows the places a manifest names in one archive: ordered while
// each is past the one before (the first may be 0+0, the archive's start).
type inOrder struct {
	n          int
	coff, skip int64
	ordered    bool
}

func (o *inOrder) add(e *Entry) {
	switch {
	case o.n == 0:
		o.ordered = true
	case e.COff < o.coff || e.COff == o.coff && e.Skip <= o.skip:
		o.ordered = false
	}
	o.n++
	o.coff, o.skip = e.COff, e.Skip
}

// checkInOrder reads archive whole beside a pass over the manifest's file
// entries in it, which name their places in the order the archive holds
// them: each must be the file at its place, with its hash. Nothing is
// held but the file at hand.
func checkInOrder(ctx context.Context, archive string, limits Limits, each func(fn func(e *Entry) error) error) error {
	as, err := openArchiveMembers(archive, limits, Folding{}, true)
	if err != nil {
		return err
	}
	defer as.Close()
	as.ordered = true // (a Rewind archive is in walk order: no map of every path)
	h := sha256.New()
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	var cur *Entry
	var content io.Reader
	advance := func() error {
		if content != nil {
			if _, err := io.CopyBuffer(io.Discard, ctxio.Reader{Ctx: ctx, R: content}, *buf); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return archiveReadErr(cur, err)
			}
		}
		var err error
		if cur, content, err = as.next(); err == io.EOF {
			cur, content = nil, nil
		} else if err != nil {
			return err
		}
		return nil
	}
	if err := advance(); err != nil {
		return err
	}
	err = each(func(e *Entry) error {
		if e.Kind != KindFile || e.Src != archive {
			return nil
		}
		for cur != nil && (cur.COff < e.COff || cur.COff == e.COff && cur.Skip < e.Skip) {
			if err := advance(); err != nil {
				return err
			}
		}
		if cur == nil || cur.Kind != KindFile || cur.COff != e.COff || cur.Skip != e.Skip || cur.Path != e.Path {
			return fmt.Errorf("%s: not in %s at member %d+%d, where its manifest says its content is", e.Path, e.Src, e.COff, e.Skip)
		}
		h.Reset()
		if _, err := io.CopyBuffer(h, ctxio.Reader{Ctx: ctx, R: content}, *buf); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return archiveReadErr(cur, err)
		}
		content = nil
		var sum [sha256.Size]byte
		p := placed{hash: [sha256.Size]byte(h.Sum(sum[:0]))}
		if !p.hashIs(e.Hash) {
			return fmt.Errorf("%s: content in %s differs from its manifest's hash", e.Path, e.Src)
		}
		return advance()
	})
	for err == nil && cur != nil { // the rest, for its checksums and structure
		err = advance()
	}
	if err != nil && as.disordered {
		return errDisordered
	}
	return err
}

// errDisordered is an archive not in walk order (not written by Rewind),
// met where it is read in that order: checkInOrder's archive is indexed
// instead, and a restore's is copied into walk order (inWalkOrder).
var errDisordered = errors.New("archive not in walk order")

// ReadFiles calls fn with the content of each file of the snapshot m
// describes whose path want takes (at most limit bytes each; larger files
// get nil), fetched from the archive that holds each. m may be one opened
// with OpenManifest: it is read in one pass, not held; want must not keep
// the path it is given.
func ReadFiles(m *Manifest, want func(path string) bool, limit int64, fn func(path string, data []byte) error) error {
	f := newFetcher()
	defer f.close()
	return m.each(func(e *Entry) error {
		if e.Kind != KindFile || !want(e.Path) {
			return nil
		}
		var data []byte
		if e.Size <= limit {
			r, err := f.open(e)
			if err != nil {
				return err
			}
			if data, err = io.ReadAll(r); err != nil {
				return err
			}
		}
		return fn(strings.Clone(e.Path), data) // (e is the pass's: see each)
	})
}

// FileReader reads the content of a snapshot's files asked for in walk
// order (the order changes are listed in), in one pass over its manifest
// beside the caller's: what a diff of a whole tree shows is read as it is
// shown, not held. Close it when done.
type FileReader struct {
	m     *Manifest
	limit int64
	ask   chan string     // the path wanted next (closed by Close)
	got   chan readAnswer // its content
	done  chan struct{}   // closed when the pass has ended
	last  string          // the path last asked of the pass
}

// Content is what a snapshot holds at a path, as a FileReader reads it: a
// patch needs the kind and mode beside the bytes (see git's file modes).
type Content struct {
	Kind Kind        // 0 when the snapshot has nothing at the path
	Mode fs.FileMode // permission bits
	Size int64       // a file's size; Data holds at most the reader's limit+1 bytes of it
	Data []byte      // a file's content; nil for anything else
	Link string      // a symlink's target
}

type readAnswer struct {
	c   Content
	err error
}

// NewFileReader reads the files of the snapshot m describes (m may be one
// opened with OpenManifest) at most limit bytes of each.
func NewFileReader(m *Manifest, limit int64) *FileReader {
	return &FileReader{m: m, limit: limit}
}

// Read returns what the snapshot holds at path: the zero Content when it
// has nothing there, the first limit+1 bytes of a file larger than limit. A
// path asked for after one later in walk order is found by a pass of its
// own.
func (r *FileReader) Read(path string) (Content, error) {
	if r.ask != nil && comparePaths(path, r.last) <= 0 {
		alone := NewFileReader(r.m, r.limit)
		defer alone.Close()
		return alone.Read(path)
	}
	if r.ask == nil {
		r.ask, r.got, r.done = make(chan string), make(chan readAnswer), make(chan struct{})
		go r.pass()
	}
	r.last = path
	r.ask <- path
	res := <-r.got
	return res.c, res.err
}

// Close ends the pass.
func (r *FileReader) Close() {
	if r.ask != nil {
		close(r.ask)
		<-r.done
		r.ask = nil
	}
}

// errAsked ends the pass of a FileReader once nothing more is asked.
var errAsked = errors.New("nothing more asked")

// pass answers what Read asks, in walk order, from one pass over r.m.
func (r *FileReader) pass() {
	defer close(r.done)
	want, more := <-r.ask
	f := newFetcher()
	defer f.close()
	err := r.m.each(func(e *Entry) error {
		for more && comparePaths(want, e.Path) < 0 { // passed: not in the snapshot
			r.got <- readAnswer{}
			want, more = <-r.ask
		}
		if !more {
			return errAsked
		}
		if e.Path != want {
			return nil
		}
		// (e is the pass's: its strings are copied to be kept; see each)
		res := readAnswer{c: Content{Kind: e.Kind, Mode: e.Mode, Size: e.Size, Link: strings.Clone(e.Link)}}
		if e.Kind == KindFile {
			c, err := f.open(e)
			if err != nil {
				return err
			}
			if res.c.Data, err = io.ReadAll(io.LimitReader(c, r.limit+1)); err != nil {
				return err
			}
		}
		r.got <- res
		if want, more = <-r.ask; !more {
			return errAsked
		}
		return nil
	})
	if err == errAsked {
		err = nil
	}
	for more { // the pass is over: what is asked now is not in the snapshot
		r.got <- readAnswer{err: err}
		want, more = <-r.ask
	}
}

// diffManifests hands fn the changes from snapshot old to snapshot cur
// in path order, either opened with OpenManifest (then read in a pass, not
// held). With fold, the way the file system the snapshots were taken on
// compares names (see ProbeFolding), a path the two spell otherwise is one
// path (renamed when only the case of its name differs), not one deleted
// and one added: a change is then held as long as a spelling that pairs
// with it may come (see respeltQueue). The zero Folding compares names
// byte for byte. An error from fn ends the comparison and is returned.
func diffManifests(old, cur *Manifest, fold Folding, fn func(Change) error) error {
	if old == cur {
		return nil
	}
	if err := cur.sparseOver(old); err != nil {
		return err
	}
	// Where names fold, the changes go through a queue that pairs the
	// spellings the merge leaves on either side (see respeltQueue). Two
	// snapshots of one tree on such a file system cannot hold two
	// spellings of one name at once: a key match is the same path.
	var q *respeltQueue
	if fold.Folds() {
		q = newRespeltQueue(fold, func(string, string) bool { return true }, func(e, o *Entry) (Op, error) { return compareSnapshots(e, o), nil }, fn)
	}
	merge := func(fn func(o, e *Entry) error) error { return mergeWith(old, cur.Entries, fn) }
	if cur.stream != nil { // read beside old, the entries a chunk's own: copied to be kept
		merge = func(fn func(o, e *Entry) error) error { return mergeManifests(old, cur, fn) }
	}
	err := merge(func(o, e *Entry) error {
		switch {
		case o == nil && q != nil:
			a := *e
			return q.added(&a)
		case o == nil:
			return fn(Change{Type: "change", Op: OpAdded, Path: e.Path, Kind: e.Kind.String()})
		case e == nil && q != nil:
			d := *o // (old may be read as the pass goes: see each)
			d.Path, d.Hash, d.Link = strings.Clone(o.Path), strings.Clone(o.Hash), strings.Clone(o.Link)
			return q.deleted(&d)
		case e == nil:
			return fn(Change{Type: "change", Op: OpDeleted, Path: strings.Clone(o.Path), Kind: o.Kind.String()})
		}
		op := compareSnapshots(e, o)
		switch {
		case op == "":
		case q != nil:
			return q.change(Change{Type: "change", Op: op, Path: e.Path, Kind: e.Kind.String()})
		default:
			return fn(Change{Type: "change", Op: op, Path: e.Path, Kind: e.Kind.String()})
		}
		return nil
	})
	if err != nil || q == nil {
		return err
	}
	return q.finish()
}

// ChangeCounts counts the files and symlinks a snapshot added, deleted and
// modified (content, kind, link or mode; a rename of case only, where names
// fold) over another; folders do not count.
type ChangeCounts struct {
	Added, Deleted, Modified int
}

// CountChanges counts what Diff from old to cur hands on, in memory that does
// not grow with the changes: a save of a whole tree counts its changes
// however many.
func CountChanges(old, cur *Manifest, fold Folding) (ChangeCounts, error) {
	var c ChangeCounts
	err := diffManifests(old, cur, fold, func(ch Change) error {
		switch {
		case ch.Kind == KindDir.String():
		case ch.Op == OpAdded:
			c.Added++
		case ch.Op == OpDeleted:
			c.Deleted++
		default:
			c.Modified++
		}
		return nil
	})
	return c, err
}

// compareSnapshots compares two snapshots' entries for one path: "" when
// they are the same.
func compareSnapshots(e, o *Entry) Op {
	switch {
	case e.Kind != o.Kind || e.Hash != o.Hash || e.Link != o.Link:
		return OpModified
	case e.Mode != o.Mode:
		return OpMode
	}
	return ""
}
