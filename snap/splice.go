package snap

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
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
func writeSpliced(ctx context.Context, w io.Writer, m *Manifest, kept []bool) (files int, ok bool, err error) {
	if m.Entries == nil || m.stream != nil {
		return 0, false, nil
	}
	bm := m // a full snapshot, some of its entries left out
	if len(m.chain) > 1 {
		var err error
		if bm, err = ReadManifest(m.chain[len(m.chain)-1]); err != nil {
			return 0, false, nil // the whole write names the damage
		}
		defer bm.Release()
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
	first := true
	for i := range bm.Entries {
		e := &bm.Entries[i]
		if e.Kind != KindFile {
			continue
		}
		if e.Src != archive {
			return 0, false, nil
		}
		p := streamPos{e.COff, e.Skip}
		if !first && !last.before(p) {
			return 0, false, nil
		}
		last, first = p, false
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
		mw: newMemberWriter(w, gzip.BestSpeed, archiveMark(false)),
	}
	sp.tw = tar.NewWriter(sp.mw)
	files, err = sp.run(m, bm, kept)
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
}

type splicer struct {
	ctx  context.Context
	src  *os.File
	name string
	size int64
	mw   *memberWriter
	tw   *tar.Writer

	// The member last inflated, kept: a stretch often ends in the member
	// the next one starts in.
	memberAt   int64
	memberData []byte
	memberLen  int64 // compressed
	hasMember  bool
}

func (sp *splicer) run(m, bm *Manifest, kept []bool) (files int, err error) {
	// The base's stretches: stretch 0 holds what comes before its first
	// file, stretch k (k ≥ 1) its k-th file and the folders and symlinks
	// after it up to the next file.
	idx := map[*Entry]int{}
	for i := range m.Entries {
		idx[&m.Entries[i]] = i
	}
	var ops []spliceOp
	var starts []streamPos // of each stretch
	starts = append(starts, streamPos{})
	seg := 0
	mergeEntries(bm.Entries, m.Entries, func(old, cur *Entry) {
		if old != nil && old.Kind == KindFile {
			seg++
			starts = append(starts, streamPos{old.COff, old.Skip})
		}
		keep := cur != nil && kept[idx[cur]]
		switch {
		case old != nil && keep && sameInArchive(old, cur):
			ops = append(ops, spliceOp{base: old, cur: cur, seg: seg, copy: true})
		case old != nil:
			ops = append(ops, spliceOp{base: old, seg: seg})
			if keep {
				ops = append(ops, spliceOp{cur: cur, seg: -1})
			}
		case keep:
			ops = append(ops, spliceOp{cur: cur, seg: -1})
		}
	})
	// A stretch is copied when everything in it is kept, and nothing comes
	// between its entries.
	whole := make([]bool, len(starts))
	for i := range whole {
		whole[i] = true
	}
	firstOp := make([]int, len(starts))
	for i := range firstOp {
		firstOp[i] = -1
	}
	for i, op := range ops {
		if op.seg >= 0 {
			if firstOp[op.seg] < 0 {
				firstOp[op.seg] = i
			} else if ops[i-1].seg != op.seg {
				whole[op.seg] = false
			}
			if !op.copy {
				whole[op.seg] = false
			}
		}
	}
	// The stream to copy next: [from, to); open when pending.
	// toEnd: to the end of the last entry, the stretch last starting at
	// lastAt, which is inflated (its end is not recorded).
	var from, to, lastAt streamPos
	var pending, toEnd bool
	flush := func() error {
		if !pending {
			return nil
		}
		pending = false
		if err := sp.tw.Flush(); err != nil {
			return err
		}
		if !toEnd {
			return sp.copyStream(from, to)
		}
		if from != lastAt {
			if err := sp.copyStream(from, lastAt); err != nil {
				return err
			}
		}
		return sp.copyToEnd(lastAt)
	}
	ew := newEntryWriter(sp.tw, limitsOf(m))
	defer ew.close()
	for i, op := range ops {
		if i&255 == 0 {
			if err := sp.ctx.Err(); err != nil {
				return 0, err
			}
		}
		if op.copy && op.cur.Kind == KindFile {
			files++
		}
		if op.seg >= 0 && whole[op.seg] {
			if firstOp[op.seg] != i {
				continue // the stretch is copied with its first entry
			}
			s, end := starts[op.seg], op.seg+1 == len(starts)
			var e streamPos
			if !end {
				e = starts[op.seg+1]
			}
			if pending && !toEnd && to == s {
				to, toEnd, lastAt = e, end, s
				continue
			}
			if err := flush(); err != nil {
				return 0, err
			}
			from, to, toEnd, lastAt, pending = s, e, end, s, true
			continue
		}
		if op.cur == nil {
			continue // left out
		}
		if err := flush(); err != nil {
			return 0, err
		}
		e := op.cur
		// A file of the base's is read from its member: the base is not
		// read through.
		wrote, err := ew.write(e, e.Src == sp.name)
		if err != nil {
			return 0, err
		}
		if wrote && e.Kind == KindFile && !op.copy {
			files++
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	if err := sp.tw.Close(); err != nil {
		return 0, err
	}
	return files, sp.mw.Close()
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
		if err := sp.mw.writeRaw(sp.ctx, io.NewSectionReader(sp.src, rawFrom, b.coff-rawFrom)); err != nil {
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
	in := newBufferedCount(bufio.NewReaderSize(nil, 64<<10), io.NewSectionReader(sp.src, coff, sp.size-coff))
	zr, err := gzip.NewReader(in.br)
	if err != nil {
		return nil, 0, sp.damaged(coff, "no gzip member")
	}
	zr.Multistream(false)
	data, err := io.ReadAll(io.LimitReader(zr, maxTrailer*64+1))
	if err != nil {
		return nil, 0, sp.damaged(coff, err.Error())
	}
	if len(data) > maxTrailer*64 {
		return nil, 0, sp.damaged(coff, "a member larger than any snapshot writes")
	}
	n := in.consumed()
	sp.memberAt, sp.memberData, sp.memberLen, sp.hasMember = coff, data, n, true
	return data, n, nil
}

func (sp *splicer) damaged(coff int64, why string) error {
	return &ArchiveError{Archive: sp.name, Reason: fmt.Sprintf("member at %d: %s; the snapshot is damaged", coff, why)}
}
