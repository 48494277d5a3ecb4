package snap

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/gzip"

	"rewind.dev/internal/ctxio"
	"rewind.dev/snap/gzmember"
)

// WriteOptions say what WriteFull leaves out of a tree and changes in it.
type WriteOptions struct {
	// Keep returns false for the entries left out (nil keeps all); it
	// must copy what it keeps of an entry: the manifest may be one opened
	// with OpenManifest, read in passes, not held.
	Keep func(e *Entry) bool
	// Rewrite, when set, returns for a kept file a function that changes
	// its content in place (its length stays), or nil to write it as it
	// is. A file rewritten is read whole, checked against its hash, then
	// changed: never copied from its archive as it is.
	Rewrite func(e *Entry) func(content []byte)
}

// WriteFull writes the tree m describes (a full snapshot or a layer chain,
// read from disk) onto w as one full snapshot archive, in the format Create
// writes: a tar.gz of independent gzip members, marked full, that restores on
// its own, less the entries o.Keep leaves out and with the files o.Rewrite
// names changed. A full snapshot's archive with every entry kept and none
// changed is copied as it is; the stretches of it a layer chain (or a
// selection) keeps unchanged are copied as their gzip members (see
// writeSpliced). Any other file's content is read from the archive its
// manifest names, checked against its hash: an archive read in the
// manifest's order is inflated once, front to back; a file found out of
// order is fetched from its own member.
func WriteFull(ctx context.Context, w io.Writer, m *Manifest, o WriteOptions) (files int, err error) {
	kept := make([]bool, 0, m.size()) // Keep and Rewrite are asked once per entry
	var rewrite map[int]func([]byte)
	all := true
	err = m.each(func(e *Entry) error {
		k := o.Keep == nil || o.Keep(e)
		if k && e.Kind == KindFile && o.Rewrite != nil {
			if f := o.Rewrite(e); f != nil {
				if rewrite == nil {
					rewrite = map[int]func([]byte){}
				}
				rewrite[len(kept)] = f
			}
		}
		kept = append(kept, k)
		all = all && k
		return nil
	})
	if err != nil {
		return 0, err
	}
	if all && len(rewrite) == 0 {
		if n, ok, err := copyWhole(ctx, w, m); ok || err != nil {
			return n, err
		}
	}
	if n, ok, err := writeSpliced(ctx, w, m, kept, rewrite); ok || err != nil {
		return n, err
	}
	mw := gzmember.NewWriter(w, gzip.BestSpeed, archiveMark(false))
	tw := tar.NewWriter(mw)
	ew := newEntryWriter(tw, limitsOf(m))
	defer ew.close()
	i := 0
	err = m.each(func(e *Entry) error {
		if i&255 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		i++
		if i > len(kept) || !kept[i-1] {
			return nil
		}
		wrote, err := ew.write(e, false, rewrite[i-1])
		if err != nil {
			return err
		}
		if wrote && e.Kind == KindFile {
			files++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	return files, mw.Close()
}

// copyWhole copies m's archive as it is when it already is the archive
// WriteFull would write, all entries kept: a full snapshot's, with every
// file in it. ok is false when it is not.
func copyWhole(ctx context.Context, w io.Writer, m *Manifest) (files int, ok bool, err error) {
	archive := m.Header.Archive
	if m.Header.Depth != 0 || archive == "" {
		return 0, false, nil
	}
	if !filepath.IsAbs(archive) && m.File != "" {
		archive = filepath.Join(filepath.Dir(m.File), archive)
	}
	own := true
	err = m.each(func(e *Entry) error {
		if e.Kind == KindFile {
			files++
			own = own && e.Src == archive
		}
		return nil
	})
	if err != nil || !own {
		return 0, false, nil // (one that does not read: the whole write names the damage)
	}
	if kind, err := markOf(archive); err != nil || kind != "full" {
		return 0, false, nil
	}
	f, err := os.Open(archive)
	if err != nil {
		return 0, true, fmt.Errorf("archive %s: %w", archive, err)
	}
	defer f.Close()
	if _, err := io.Copy(w, ctxio.Reader{Ctx: ctx, R: f}); err != nil {
		return 0, true, fmt.Errorf("copy %s: %w", archive, err)
	}
	return files, true, nil
}

// markOf reads an archive's mark (see archiveMark).
func markOf(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	defer zr.Close()
	return archiveKind(zr.Header.Extra), nil
}

// entryWriter writes entries of a manifest chain onto a tar stream, each
// file's content read from the archive its manifest names and checked
// against its hash: an archive read in the manifest's order is inflated
// once, front to back; a file found out of order is fetched from its own
// member.
type entryWriter struct {
	tw       *tar.Writer
	seq      map[string]*seqArchive
	fetch    *fetcher
	limits   Limits
	uid, gid int
	buf      []byte
}

func newEntryWriter(tw *tar.Writer, limits Limits) *entryWriter {
	return &entryWriter{tw: tw, seq: map[string]*seqArchive{}, fetch: newFetcher(), limits: limits,
		uid: os.Getuid(), gid: os.Getgid(), buf: make([]byte, 256<<10)}
}

func (ew *entryWriter) close() {
	for _, s := range ew.seq {
		s.close()
	}
	ew.fetch.close()
}

// write writes e, and a file's content: from its own member when member
// is set (an archive the caller is not reading through), else as above;
// changed by rewrite when it is set (see WriteOptions). It reports false
// for an entry a tar stream cannot hold (see tarHeader).
func (ew *entryWriter) write(e *Entry, member bool, rewrite func([]byte)) (bool, error) {
	hdr, ok := tarHeader(e, ew.uid, ew.gid)
	if !ok {
		return false, nil
	}
	if err := ew.tw.WriteHeader(hdr); err != nil {
		return false, fmt.Errorf("write %s: %w", e.Path, err)
	}
	if e.Kind != KindFile {
		return true, nil
	}
	var r io.Reader
	var err error
	if member {
		r, err = ew.fetch.open(e)
	} else {
		r, err = contentOf(e, ew.seq, ew.fetch, ew.limits)
	}
	if err != nil {
		return false, err
	}
	if rewrite != nil {
		data, err := io.ReadAll(io.LimitReader(r, e.Size))
		if err == nil {
			_, err = io.Copy(io.Discard, r) // (to EOF: the hash is checked)
		}
		if err == nil && int64(len(data)) != e.Size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return false, archiveReadErr(e, err)
		}
		rewrite(data)
		if _, err := ew.tw.Write(data); err != nil {
			return false, fmt.Errorf("write %s: %w", e.Path, err)
		}
		return true, nil
	}
	if _, err := io.CopyBuffer(ew.tw, io.LimitReader(r, e.Size), ew.buf); err != nil {
		return false, archiveReadErr(e, err)
	}
	// Read to EOF, so the hash is checked.
	if _, err := io.Copy(io.Discard, r); err != nil {
		return false, archiveReadErr(e, err)
	}
	return true, nil
}

// contentOf returns a reader of e's content that fails at its end when the
// content differs from e.Hash.
func contentOf(e *Entry, seq map[string]*seqArchive, fetch *fetcher, limits Limits) (io.Reader, error) {
	s := seq[e.Src]
	if s == nil {
		as, err := openArchive(e.Src, limits, Folding{})
		if err != nil {
			return nil, err
		}
		// Checked in walk order, as Rewind writes archives, not against a
		// map of every path: one that is not stops being read through, and
		// its files are fetched from their members (so is any damage).
		as.ordered = true
		s = &seqArchive{as: as}
		seq[e.Src] = s
	}
	if content := s.find(e.Path); content != nil {
		return &hashCheck{r: io.LimitReader(content, e.Size), h: sha256.New(), want: e.Hash, e: e}, nil
	}
	return fetch.open(e)
}

// seqArchive reads one archive front to back, handing out the content of
// the files asked for in its order.
type seqArchive struct {
	as      *archiveScanner
	done    bool
	pending *Entry // read, and past the path last asked for
	content io.Reader
}

// find advances to path and returns its content, or nil when the archive
// is past it (or at its end): the caller fetches it from its member.
func (s *seqArchive) find(path string) io.Reader {
	for !s.done {
		e, content := s.pending, s.content
		s.pending, s.content = nil, nil
		if e == nil {
			var err error
			if e, content, err = s.as.next(); err != nil {
				s.done = true // io.EOF, or damage the fetcher will name
				return nil
			}
		}
		if content != nil && e.Path == path {
			return content
		}
		if comparePaths(e.Path, path) > 0 {
			// Past it: kept for the next files asked for, which may be it.
			s.pending, s.content = e, content
			return nil
		}
	}
	return nil
}

func (s *seqArchive) close() { s.as.Close() }

// tarHeader is the tar header of entry e in a full snapshot's archive
// (owned by uid and gid); false for an entry of no kind an archive holds.
func tarHeader(e *Entry, uid, gid int) (*tar.Header, bool) {
	hdr := &tar.Header{Name: e.Path, Mode: int64(e.Mode), ModTime: time.Unix(0, e.MTime), Uid: uid, Gid: gid}
	switch e.Kind {
	case KindDir:
		hdr.Typeflag, hdr.Name = tar.TypeDir, e.Path+"/"
	case KindSymlink:
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.Link
	case KindFile:
		hdr.Typeflag, hdr.Size = tar.TypeReg, e.Size
	default:
		return nil, false
	}
	return hdr, true
}
