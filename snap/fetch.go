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
}

func newFetcher() *fetcher { return &fetcher{files: map[string]*os.File{}} }

func (f *fetcher) close() {
	for _, fh := range f.files {
		fh.Close()
	}
}

// open returns a reader of e's content; reading it to EOF fails if the
// content does not match e.Hash.
func (f *fetcher) open(e *Entry) (io.Reader, error) {
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
	bad := func(why string) error {
		return &ArchiveError{Archive: e.Src, Entry: e.Path, Reason: why + " at the place its manifest records; the snapshot is damaged"}
	}
	if e.COff < 0 || e.COff >= fi.Size() || e.Skip < 0 {
		return nil, bad("no such location")
	}
	zr, err := gzip.NewReader(io.NewSectionReader(fh, e.COff, fi.Size()-e.COff))
	if err != nil {
		return nil, bad("no gzip member")
	}
	if _, err := io.CopyN(io.Discard, zr, e.Skip); err != nil {
		return nil, bad("data ends early")
	}
	tr := tar.NewReader(zr)
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
