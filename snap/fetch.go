package snap

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// fetcher reads single files out of archives at the locations a manifest
// records: it seeks to the gzip member holding the file's tar header,
// inflates from there (at most a member or so before the content), and
// checks that the header names the same path and size and that the content
// has the recorded hash.
type fetcher struct {
	files map[string]*os.File
	// The member last read from, and how far: a file after the last one in
	// the same member is read on from there, not inflated again from the
	// member's start (a diff of a whole tree reads every file of a member
	// in order: inflating from the start for each went over the member
	// once a file).
	src string // "" when there is none to read on from
	off int64
	zr  *fetchedMember
}

// fetchedMember counts what it inflates from the member it was reset to.
type fetchedMember struct {
	zr *gzip.Reader
	n  int64
}

func (m *fetchedMember) Read(p []byte) (int, error) {
	n, err := m.zr.Read(p)
	m.n += int64(n)
	return n, err
}

func newFetcher() *fetcher { return &fetcher{files: map[string]*os.File{}} }

func (f *fetcher) close() {
	for _, fh := range f.files {
		fh.Close()
	}
}

// open returns a reader of e's content; reading it to EOF fails if the
// content does not match e.Hash. It is good until the next open.
func (f *fetcher) open(e *Entry) (io.Reader, error) {
	bad := func(why string) error {
		f.src = "" // (nothing to read on from)
		return &ArchiveError{Archive: e.Src, Entry: e.Path, Reason: why + " at the place its manifest records; the snapshot is damaged"}
	}
	if f.src == "" || f.src != e.Src || f.off != e.COff || f.zr.n > e.Skip {
		f.src = ""
		fh := f.files[e.Src]
		if fh == nil {
			var err error
			if fh, err = os.Open(e.Src); err != nil {
				return nil, fmt.Errorf("%s: its content is in %s: %w", e.Path, e.Src, err)
			}
			f.files[e.Src] = fh
		}
		fi, err := fh.Stat()
		if err != nil {
			return nil, err
		}
		if e.COff < 0 || e.COff >= fi.Size() || e.Skip < 0 {
			return nil, bad("no such location")
		}
		member := io.NewSectionReader(fh, e.COff, fi.Size()-e.COff)
		if f.zr == nil {
			zr, err := gzip.NewReader(member)
			if err != nil {
				return nil, bad("no gzip member")
			}
			f.zr = &fetchedMember{zr: zr}
		} else if err := f.zr.zr.Reset(member); err != nil {
			return nil, bad("no gzip member")
		}
		f.src, f.off, f.zr.n = e.Src, e.COff, 0
	}
	if _, err := io.CopyN(io.Discard, f.zr, e.Skip-f.zr.n); err != nil {
		return nil, bad("data ends early")
	}
	tr := tar.NewReader(f.zr)
	hdr, err := tr.Next()
	if err != nil {
		return nil, bad("no tar header")
	}
	if strings.TrimPrefix(hdr.Name, "./") != e.Path || hdr.Size != e.Size || hdr.Typeflag != tar.TypeReg {
		return nil, bad(fmt.Sprintf("another entry (%q, %d bytes)", hdr.Name, hdr.Size))
	}
	return &hashCheck{r: io.LimitReader(tr, e.Size), h: sha256.New(), want: e.Hash, e: e}, nil
}

// hashCheck passes content through and fails at EOF when its hash differs.
type hashCheck struct {
	r    io.Reader
	h    hash.Hash
	want string
	e    *Entry
}

func (c *hashCheck) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	if err == io.EOF && hex.EncodeToString(c.h.Sum(nil)) != c.want {
		return n, &ArchiveError{Archive: c.e.Src, Entry: c.e.Path, Reason: "content differs from its manifest's hash; the snapshot is damaged"}
	}
	return n, err
}
