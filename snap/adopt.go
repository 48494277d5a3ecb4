package snap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"rewind.dev/internal/durable"
)

// ErrNotAdoptable is an archive CreateFromArchive cannot take as the
// snapshot of a tree: not a full snapshot, or not what the tree holds. The
// caller snapshots the tree as usual instead.
var ErrNotAdoptable = errors.New("the archive is not the tree's snapshot")

// ArchiveIndex is what a full snapshot archive holds, read member by member:
// every entry with its content's hash and its place (Entry.COff, Skip).
type ArchiveIndex struct {
	archive string
	size    int64
	entries map[string]*Entry
}

// IndexArchive reads archive (a full snapshot, as Create or WriteFull write
// it) whole, with the checks a restore makes of it, hashing each file's
// content and recording where its header is. It returns ErrNotAdoptable for
// an archive that is not marked full.
func IndexArchive(ctx context.Context, archive string, limits Limits) (*ArchiveIndex, error) {
	if kind, err := markOf(archive); err != nil || kind != "full" {
		return nil, ErrNotAdoptable
	}
	as, err := openArchiveMembers(archive, limits.Or(DefaultLimits))
	if err != nil {
		return nil, err
	}
	defer as.Close()
	x := &ArchiveIndex{archive: archive, size: as.csize, entries: map[string]*Entry{}}
	h := sha256.New()
	buf := make([]byte, 256<<10)
	var sum []byte
	for n := 0; ; n++ {
		if n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e, content, err := as.next()
		if err == io.EOF {
			return x, nil
		}
		if err != nil {
			return nil, err
		}
		if e.Kind == KindFile {
			h.Reset()
			if _, err := io.CopyBuffer(h, content, buf); err != nil {
				return nil, as.corrupt(err)
			}
			sum = h.Sum(sum[:0])
			e.Hash = hex.EncodeToString(sum)
		}
		x.entries[e.Path] = e
	}
}

// CreateFromArchive is CreateFromTree for a tree that was just restored
// from a full snapshot archive indexed by x (a restore into an empty
// folder): the archive is copied to opts.Out as the snapshot's own instead
// of the files being read and compressed again, and each entry's hash and
// place are the archive's, its metadata the walk's. Every entry of the walk
// must be in the archive as it is on disk (kind, size, permissions, link)
// and the archive must hold nothing else; otherwise, and for a layer
// (opts.Parent), it returns ErrNotAdoptable with nothing written.
func CreateFromArchive(ctx context.Context, tree *Tree, x *ArchiveIndex, opts CreateOptions) (*Result, error) {
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
	// CreateFromTree with the same entries.
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
	src, err := os.Open(x.archive)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if err := durable.Copy(out, 0o644, src); err != nil {
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
