package snap

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"

	"rewind.dev/snap/gzmember"
)

// writeSpliced writes a layer chain's tree as WriteFull does, without
// inflating and deflating the chain's full archive again: the stretches of
// that archive's tar stream that the tree keeps as they are (a file, the
// folders and symlinks after it up to the next file, all unchanged and
// kept) are copied as their gzip members, byte for byte; only the members
// at the edges of a stretch are inflated (the part of them the tree keeps
// deflated again), and what the layers changed is written as WriteFull
// writes it, each file read from its member and checked against its hash.
//
// It relies on what a full snapshot's manifest records: its entries in the
// archive's order, each file's header at the member COff and Skip bytes
// into it, nothing in the archive between them but the entries listed.
// ok is false when m is neither such a full snapshot nor a layer chain over
// one; the caller then writes the tree whole.
func writeSpliced(ctx context.Context, w io.Writer, m *Manifest, kept []bool, rewrite map[int]func([]byte)) (files int, ok bool, err error) {
	bm := m // a full snapshot, some of its entries left out
	if len(m.chain) > 1 {
		var err error
		if bm, err = OpenManifest(m.chain[len(m.chain)-1]); err != nil {
			return 0, false, nil // the whole write names the damage
		}
		if bm.stream != nil && m.stream != nil {
			bm.stream.chunk = m.stream.chunk // (a test's)
		}
	}
	archive := bm.Header.Archive
	if bm.Header.Depth != 0 || bm.Header.Parent != "" || archive == "" {
		return 0, false, nil
	}
	if kind, err := markOf(archive); err != nil || kind != "full" {
		return 0, false, nil
	}
	// The base's files in stream order, each one's place past the last.
	var last streamPos
	first, inOrder := true, true
	err = bm.each(func(e *Entry) error {
		if e.Kind != KindFile || !inOrder {
			return nil
		}
		p := streamPos{e.COff, e.Skip}
		if e.Src != archive || !first && !last.before(p) {
			inOrder = false
		}
		last, first = p, false
		return nil
	})
	if err != nil || !inOrder {
		return 0, false, nil // (a base that does not read: the whole write names the damage)
	}
	src, err := os.Open(archive)
	if err != nil {
		return 0, true, fmt.Errorf("archive %s: %w", archive, err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return 0, true, fmt.Errorf("archive %s: %w", archive, err)
	}
	sp := &splicer{
		ctx: ctx, src: src, name: archive, size: fi.Size(),
		mw: gzmember.NewWriter(w, gzip.BestSpeed, archiveMark(false)),
	}
	sp.tw = tar.NewWriter(sp.mw)
	files, err = sp.run(m, bm, kept, rewrite)
	if err != nil {
		return 0, true, err
	}
	return files, true, nil
}

// streamPos is a place in an archive's inflated tar stream: the gzip
// member (its offset in the file) and how many of its inflated bytes come
// before it. end marks the tar end marker, whose place a manifest does
// not record.
type streamPos struct {
	coff, skip int64
}

func (p streamPos) before(q streamPos) bool {
	return p.coff < q.coff || p.coff == q.coff && p.skip < q.skip
}

// spliceOp is one entry of the written tree, or one of the base's left out.
type spliceOp struct {
	base *Entry // the base's entry, nil for one only the tree has
	cur  *Entry // the tree's, nil for a base entry left out
	seg  int    // for a base entry: its stretch (see run); -1 for none
	copy bool   // the base's entry, kept as it is
	// rewrite changes the tree's file cur (see WriteOptions), which is
	// then written, not copied.
	rewrite func([]byte)
}

type splicer struct {
	ctx  context.Context
	src  *os.File
	name string
	size int64
	mw   *gzmember.Writer
	tw   *tar.Writer

	// The member last inflated, kept: a stretch often ends in the member
	// the next one starts in.
	memberAt   int64
	memberData []byte
	memberLen  int64 // compressed
	hasMember  bool
}

// run writes the tree: the base's stretches — stretch 0 what comes before
// its first file, stretch k (k ≥ 1) its k-th file and the folders and
// symlinks after it up to the next file — each copied as it is when
// everything in it is kept and nothing comes between its entries, the rest
// written entry by entry. The base and the tree are merged as both are
// read (either may be opened with OpenManifest), a stretch at a time: what
// is held is the stretch at hand and what comes between, not the tree.
func (sp *splicer) run(m, bm *Manifest, kept []bool, rewrite map[int]func([]byte)) (files int, err error) {
	ew := newEntryWriter(sp.tw, limitsOf(m))
	defer ew.close()
	r := &spliceRun{sp: sp, ew: ew, whole: true, prev: -1}
	i, n := 0, 0 // the tree's entries met; ops since the last check of ctx
	err = mergeManifests(bm, m, func(old, cur *Entry) error {
		if n++; n&255 == 0 {
			if err := sp.ctx.Err(); err != nil {
				return err
			}
		}
		keep := false
		var rw func([]byte)
		if cur != nil {
			keep = i < len(kept) && kept[i]
			rw = rewrite[i]
			i++
		}
		return r.meet(old, cur, keep, rw)
	})
	if err != nil {
		return 0, err
	}
	if err := r.settle(streamPos{}, true); err != nil {
		return 0, err
	}
	if err := r.flush(); err != nil {
		return 0, err
	}
	if err := sp.tw.Close(); err != nil {
		return 0, err
	}
	return r.files, sp.mw.Close()
}

// spliceRun is the state of a splicer's run: the stream to copy next, and the stretch
// gathered with the ops of it and of those between.
type spliceRun struct {
	sp *splicer
	ew *entryWriter

	// The stream to copy next: [from, to); open when pending. toEnd: to the
	// end of the last entry, the stretch last starting at lastAt, which is
	// inflated (its end is not recorded).
	from, to, lastAt streamPos
	pending, toEnd   bool

	// The stretch gathered (seg, from start), the ops of it and those
	// between; whole while it may be copied.
	ops          []spliceOp
	seg          int
	start        streamPos
	whole, began bool
	prev         int

	files int // the files written
}

// meet takes the base's entry old and the tree's cur as the merge meets them (either nil):
// a base's file closes the stretch before it; the tree's entry is copied with the stretch,
// or written, as keep and its rewrite rw say.
func (r *spliceRun) meet(old, cur *Entry, keep bool, rw func([]byte)) error {
	if old != nil {
		o := *old // (read as the pass goes: the stretch keeps its own)
		o.Path, o.Hash, o.Link = strings.Clone(old.Path), strings.Clone(old.Hash), strings.Clone(old.Link)
		old = &o
		if old.Kind == KindFile {
			next := streamPos{old.COff, old.Skip}
			if err := r.settle(next, false); err != nil {
				return err
			}
			r.seg, r.start = r.seg+1, next
			r.whole, r.began = true, false
		}
	}
	switch {
	case old != nil && keep && rw == nil && sameInArchive(old, cur):
		r.add(spliceOp{base: old, cur: cur, seg: r.seg, copy: true})
	case old != nil:
		r.add(spliceOp{base: old, seg: r.seg})
		if keep {
			r.add(spliceOp{cur: cur, seg: -1, rewrite: rw})
		}
	case keep:
		r.add(spliceOp{cur: cur, seg: -1, rewrite: rw})
	}
	return nil
}

// add gathers op into the stretch; one not copied, or out of turn, keeps it from being
// copied whole.
func (r *spliceRun) add(op spliceOp) {
	if op.seg >= 0 {
		if r.began && r.prev != op.seg || !op.copy {
			r.whole = false
		}
		r.began = true
	}
	r.prev = op.seg
	r.ops = append(r.ops, op)
}

// flush copies the stream pending, if any.
func (r *spliceRun) flush() error {
	if !r.pending {
		return nil
	}
	r.pending = false
	if err := r.sp.tw.Flush(); err != nil {
		return err
	}
	if !r.toEnd {
		return r.sp.copyStream(r.from, r.to)
	}
	if r.from != r.lastAt {
		if err := r.sp.copyStream(r.from, r.lastAt); err != nil {
			return err
		}
	}
	return r.sp.copyToEnd(r.lastAt)
}

// settle writes the ops gathered, the stretch ending at next (end: at the end of the
// stream): a whole stretch joins the stream to copy, the rest is written entry by entry.
func (r *spliceRun) settle(next streamPos, end bool) error {
	copied := false
	for _, op := range r.ops {
		if op.copy && op.cur.Kind == KindFile {
			r.files++
		}
		if op.seg >= 0 && r.whole {
			if copied {
				continue // the stretch is copied with its first entry
			}
			copied = true
			if r.pending && !r.toEnd && r.to == r.start {
				r.to, r.toEnd, r.lastAt = next, end, r.start
				continue
			}
			if err := r.flush(); err != nil {
				return err
			}
			r.from, r.to, r.toEnd, r.lastAt, r.pending = r.start, next, end, r.start, true
			continue
		}
		if op.cur == nil {
			continue // left out
		}
		if err := r.flush(); err != nil {
			return err
		}
		e := op.cur
		// A file of the base's is read from its member: the base is not
		// read through.
		wrote, err := r.ew.write(e, e.Src == r.sp.name, op.rewrite)
		if err != nil {
			return err
		}
		if wrote && e.Kind == KindFile && !op.copy {
			r.files++
		}
	}
	r.ops = r.ops[:0]
	return nil
}

// sameInArchive reports whether the base's entry old is, as the base's
// archive holds it, the tree's entry cur.
func sameInArchive(old, cur *Entry) bool {
	if old.Kind != cur.Kind || old.Mode != cur.Mode || old.MTime != cur.MTime || old.Path != cur.Path {
		return false
	}
	switch old.Kind {
	case KindFile:
		return cur.Src == old.Src && cur.COff == old.COff && cur.Skip == old.Skip && cur.Size == old.Size && cur.Hash == old.Hash
	case KindSymlink:
		return cur.Link == old.Link
	}
	return true
}

// copyStream writes the base's tar stream from a to b: the members wholly inside it as they are, the parts of
// the members at its edges inflated and written through the member writer.
func (sp *splicer) copyStream(a, b streamPos) error {
	if a.coff == b.coff {
		data, _, err := sp.member(a.coff)
		if err != nil {
			return err
		}
		if a.skip > b.skip || b.skip > int64(len(data)) {
			return sp.damaged(a.coff, "entries out of place")
		}
		_, err = sp.mw.Write(data[a.skip:b.skip])
		return err
	}
	rawFrom := a.coff
	if a.skip > 0 {
		data, clen, err := sp.member(a.coff)
		if err != nil {
			return err
		}
		if a.skip > int64(len(data)) {
			return sp.damaged(a.coff, "an entry past its member's end")
		}
		if _, err := sp.mw.Write(data[a.skip:]); err != nil {
			return err
		}
		rawFrom = a.coff + clen
	}
	if rawFrom > b.coff {
		return sp.damaged(a.coff, "entries out of place")
	}
	if rawFrom < b.coff {
		if err := sp.mw.WriteRaw(sp.ctx, io.NewSectionReader(sp.src, rawFrom, b.coff-rawFrom)); err != nil {
			return err
		}
	}
	if b.skip > 0 {
		data, _, err := sp.member(b.coff)
		if err != nil {
			return err
		}
		if b.skip > int64(len(data)) {
			return sp.damaged(b.coff, "an entry past its member's end")
		}
		if _, err := sp.mw.Write(data[:b.skip]); err != nil {
			return err
		}
	}
	return nil
}

// copyToEnd writes the base's stream from a to the end of its last entry
// (before the tar end marker), all inflated: a is in the member of the
// archive's last file, and what follows is that file and the folders and
// symlinks after it.
func (sp *splicer) copyToEnd(a streamPos) error {
	if a.coff < 0 || a.coff >= sp.size {
		return sp.damaged(a.coff, "no such member")
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(io.NewSectionReader(sp.src, a.coff, sp.size-a.coff), 256<<10))
	if err != nil {
		return sp.damaged(a.coff, "no gzip member")
	}
	defer zr.Close()
	if _, err := io.CopyN(io.Discard, zr, a.skip); err != nil {
		return sp.damaged(a.coff, "data ends early")
	}
	// The entries are written again as they are read: header by header
	// through a tar writer, which writes what the reader read.
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return sp.damaged(a.coff, err.Error())
		}
		if err := sp.tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := io.Copy(sp.tw, tr); err != nil {
				return sp.damaged(a.coff, err.Error())
			}
		}
	}
	// The gzip checksum of what was read.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return sp.damaged(a.coff, err.Error())
	}
	return nil
}

// member inflates the member at coff whole: its data, and its compressed
// length.
func (sp *splicer) member(coff int64) ([]byte, int64, error) {
	if sp.hasMember && sp.memberAt == coff {
		return sp.memberData, sp.memberLen, nil
	}
	if coff < 0 || coff >= sp.size {
		return nil, 0, sp.damaged(coff, "no such member")
	}
	zr, err := gzmember.NewSingleReader(io.NewSectionReader(sp.src, coff, sp.size-coff))
	if err != nil {
		return nil, 0, sp.damaged(coff, "no gzip member")
	}
	data, err := io.ReadAll(io.LimitReader(zr, maxTrailer*64+1))
	if err != nil {
		return nil, 0, sp.damaged(coff, err.Error())
	}
	if len(data) > maxTrailer*64 {
		return nil, 0, sp.damaged(coff, "a member larger than any snapshot writes")
	}
	n := zr.CompressedLen()
	sp.memberAt, sp.memberData, sp.memberLen, sp.hasMember = coff, data, n, true
	return data, n, nil
}

func (sp *splicer) damaged(coff int64, why string) error {
	return &ArchiveError{Archive: sp.name, Reason: fmt.Sprintf("member at %d: %s; the snapshot is damaged", coff, why)}
}
