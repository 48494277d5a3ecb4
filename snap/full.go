package snap

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
)

// createFull is Create for a full snapshot (no parent) written as the walk
// goes (no CreateOptions.Tree), in memory that does not grow with the tree: the walk's entries
// (WalkEach) are archived a batch at a time, and, when manifest is not "",
// their lines written to a file beside it, which becomes the manifest once
// the archive is closed (a file's place in the archive is known then: its
// line holds the number of its gzip member until). The Result's Manifest
// has no Entries; its File is manifest.
func createFull(ctx context.Context, root string, walk WalkOptions, opts CreateOptions, manifest string) (*Result, error) {
	limits := opts.Limits.Or(DefaultLimits)
	if opts.Out == "" {
		return nil, ErrNoArchive
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return nil, err
	}
	a, err := newArchiveWriter(out, opts.Level, false)
	if err != nil {
		return nil, err
	}
	defer a.abort()
	var lines *durable.File // (a temporary file beside the manifest, never committed)
	var lw *bufio.Writer
	dir := ""
	if manifest != "" {
		if manifest, err = filepath.Abs(manifest); err != nil {
			return nil, err
		}
		dir = filepath.Dir(manifest)
		if lines, err = durable.Create(manifest, layout.FileMode); err != nil {
			return nil, err
		}
		defer lines.Abort()
		lw = bufio.NewWriterSize(lines.File, 256<<10)
	}
	var hdr ManifestHeader
	var th treeHasher
	walked := limitCount{l: limits} // what the walk found
	held := limitCount{l: limits}   // what the archive holds: files may have grown since
	batch := make([]Entry, 0, cmp.Or(opts.fullBatch, fullBatch))
	var b []byte
	flush := func() error {
		kept, err := a.add(ctx, root, batch, nil, true)
		if err != nil {
			return err
		}
		for i := range kept {
			e := &kept[i]
			hdr.count(e)
			th.add(e)
			if err := held.add(e); err != nil {
				return err
			}
			if lw != nil {
				b = appendEntryLine(b[:0], e, out, dir)
				if _, err := lw.Write(b); err != nil {
					return fmt.Errorf("manifest %s: %w", manifest, err)
				}
			}
		}
		batch = batch[:0]
		return nil
	}
	// The archive is much slower than the walk: a small window costs it
	// nothing, and holds 2 to 3 MB rather than 40.
	walk.window = cap(batch)
	tree, err := WalkEach(ctx, root, walk, func(e *Entry) error {
		if err := walked.add(e); err != nil {
			return err
		}
		if batch = append(batch, *e); len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if err := a.close(); err != nil {
		return nil, err
	}
	hdr.Type, hdr.Version, hdr.ScanStarted, hdr.TreeHash = "manifest", ManifestVersion, tree.Started, th.sum()
	m := &Manifest{Header: hdr}
	var recorded *Limits
	if limits != DefaultLimits {
		recorded = &limits
	}
	m.wrote(out, a.cw.N, tree, a.lost, recorded, nil)
	if err := a.f.Commit(); err != nil {
		return nil, err
	}
	if manifest != "" {
		if err := lw.Flush(); err != nil {
			return nil, fmt.Errorf("manifest %s: %w", manifest, err)
		}
		if err := durable.Write(manifest, layout.FileMode, func(w io.Writer) error { return m.encodeLines(w, dir, lines.File, a) }); err != nil {
			return nil, err
		}
		m.File = manifest
	}
	res := resultFor(m, tree, false, out)
	res.LayerFiles = m.Header.Files // (all of them: a full snapshot's)
	return res, nil
}

// fullBatch is how many entries createFull archives at once. Tests make
// batches of a few (CreateOptions.fullBatch).
const fullBatch = 1 << 14

// encodeLines writes m's header, then the entry lines written to the file
// lines, each file's gzip member number made the member's offset in a.
func (m *Manifest) encodeLines(w io.Writer, dir string, lines *os.File, a *archiveWriter) error {
	hdr := m.Header
	hdr.Archive = relTo(dir, hdr.Archive)
	hb, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(hb)
	bw.WriteByte('\n')
	if _, err := lines.Seek(0, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(lines, 256<<10)
	var num []byte
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil {
			return fmt.Errorf("read back %s: %w", lines.Name(), err)
		}
		if line[0] != 'f' {
			bw.Write(line)
			continue
		}
		// kind mode size mtime ctime inode hash src, then the member.
		at := 0
		for range 8 {
			k := bytes.IndexByte(line[at:], '\t')
			if k < 0 {
				return fmt.Errorf("read back %s: a line without its member: %.80q", lines.Name(), line)
			}
			at += k + 1
		}
		k := bytes.IndexByte(line[at:], '\t')
		if k < 0 {
			return fmt.Errorf("read back %s: a line without its member: %.80q", lines.Name(), line)
		}
		n, err := strconv.ParseInt(string(line[at:at+k]), 10, 64)
		if err != nil {
			return fmt.Errorf("read back %s: %w", lines.Name(), err)
		}
		bw.Write(line[:at])
		num = strconv.AppendInt(num[:0], a.start(n), 10)
		bw.Write(num)
		bw.Write(line[at+k:])
	}
	return bw.Flush()
}
