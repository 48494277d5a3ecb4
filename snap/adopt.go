package snap

import (
	"context"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"path/filepath"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
)

// ErrNotAdoptable is an archive Create cannot adopt (CreateOptions.Adopt)
// as the snapshot of a tree: not a full snapshot, or not what the tree
// holds. The caller snapshots the tree as usual instead.
var ErrNotAdoptable = errors.New("the archive is not the tree's snapshot")

// ArchiveIndex is what a full snapshot archive holds, read member by member:
// every entry with its content's hash and its place (Entry.COff, Skip).
type ArchiveIndex struct {
	archive string
	size    int64
	entries map[string]*Entry
}

// restoreIndexed is Restore of an archive read whole that also indexes it,
// in the same read (RestoreOptions.Index).
func restoreIndexed(ctx context.Context, root, archive string, opts RestoreOptions) (*RestoreResult, error) {
	if opts.Manifest != nil || opts.Paths != nil {
		return nil, errors.New("snap: RestoreOptions.Index reads a whole archive: no Manifest, no Paths")
	}
	x := new(ArchiveIndex)
	opts.Index, opts.index = false, x
	res, err := Restore(ctx, root, archive, opts)
	if res != nil && err == nil && x.entries != nil {
		res.Index = x
	}
	return res, err
}

// hashingReader hashes a file's content as the restore reads it.
type hashingReader struct {
	e   *Entry
	r   io.Reader
	h   hash.Hash
	n   int64
	sum []byte
}

func (hr *hashingReader) start(e *Entry, r io.Reader) {
	hr.e, hr.r, hr.n = e, r, 0
	hr.h.Reset()
}

func (hr *hashingReader) Read(p []byte) (int, error) {
	n, err := hr.r.Read(p)
	hr.h.Write(p[:n])
	hr.n += int64(n)
	return n, err
}

// finish reads what is left of the content and records its hash.
func (hr *hashingReader) finish(buf []byte) error {
	if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{hr}, buf); err != nil {
		return err
	}
	if hr.n != hr.e.Size {
		return io.ErrUnexpectedEOF
	}
	hr.sum = hr.h.Sum(hr.sum[:0])
	hr.e.Hash = hex.EncodeToString(hr.sum)
	hr.e = nil
	return nil
}

// createFromArchive is Create for a tree that was just restored from a
// full snapshot archive indexed by x (CreateOptions.Adopt): the archive
// becomes the snapshot's own at opts.Out instead of the files being read
// and compressed again, and each entry's hash and place are the archive's,
// its metadata the walk's. Every entry of the walk
// must be in the archive as it is on disk (kind, size, permissions, link)
// and the archive must hold nothing else; otherwise, and for a layer
// (opts.Parent), it returns ErrNotAdoptable with nothing written.
func createFromArchive(ctx context.Context, tree *Tree, x *ArchiveIndex, opts CreateOptions) (*Result, error) {
	if opts.Parent != nil || opts.Out == "" || len(tree.Unreadable) > 0 || len(tree.Entries) != len(x.entries) {
		return nil, ErrNotAdoptable
	}
	limits := opts.Limits.Or(DefaultLimits)
	if err := limits.check(tree.Entries); err != nil {
		return nil, err
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return nil, err
	}
	// Checked whole before anything is changed: the caller falls back to
	// createFromTree with the same entries.
	for i := range tree.Entries {
		e := &tree.Entries[i]
		a := x.entries[e.Path]
		switch {
		case a == nil || a.Kind != e.Kind:
			return nil, ErrNotAdoptable
		case a.Kind != KindSymlink && a.Mode&fs.ModePerm != e.Mode&fs.ModePerm:
			return nil, ErrNotAdoptable
		case a.Kind == KindFile && a.Size != e.Size:
			return nil, ErrNotAdoptable
		case a.Kind == KindSymlink && a.Link != e.Link:
			return nil, ErrNotAdoptable
		}
		if i > 0 && comparePaths(tree.Entries[i-1].Path, e.Path) >= 0 {
			return nil, ErrNotAdoptable
		}
	}
	for i := range tree.Entries {
		if e := &tree.Entries[i]; e.Kind == KindFile {
			a := x.entries[e.Path]
			e.Hash, e.Src, e.COff, e.Skip = a.Hash, out, a.COff, a.Skip
		}
	}
	if err := durable.Adopt(out, layout.FileMode, x.archive); err != nil {
		return nil, err
	}
	var recorded *Limits
	if limits != DefaultLimits {
		recorded = &limits
	}
	m := newManifest(tree.Entries, tree.Started)
	m.sizes = map[string]int64{out: x.size}
	m.Header.Limits = recorded
	m.Header.Unreadable = nil
	m.Header.Rules = &tree.Rules
	m.Header.CompressedBytes = x.size
	m.Header.BaseCompressed = x.size
	m.Header.Archive = out
	return resultFor(m, tree, false, out), nil
}
