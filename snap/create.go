package snap

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/klauspost/pgzip"
)

// CreateOptions adjust Create.
type CreateOptions struct {
	// Out is the archive to write. When Parent is set and the tree has not
	// changed, nothing is written there.
	Out string
	// Parent is the manifest of the previous snapshot, if any: with it an
	// unchanged tree is detected from metadata without reading file contents
	// (files whose metadata is racy are hashed).
	Parent *Manifest
	// Level is the gzip level; 0 means fastest (1).
	Level int
	Walk  WalkOptions
}

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
	Archive         string   `json:"archive,omitempty"`
	Skipped         []string `json:"skipped,omitempty"` // sockets, FIFOs, devices
	// Manifest describes the tree as captured (with content hashes).
	Manifest *Manifest `json:"-"`
}

// Create snapshots the tree at root.
func Create(ctx context.Context, root string, opts CreateOptions) (*Result, error) {
	scanStarted := time.Now().UnixNano()
	tree, err := Walk(ctx, root, opts.Walk)
	if err != nil {
		return nil, err
	}
	if opts.Parent != nil {
		same, err := sameAsParent(ctx, root, tree.Entries, opts.Parent)
		if err != nil {
			return nil, err
		}
		if same {
			m := newManifest(tree.Entries, scanStarted)
			m.Header.CompressedBytes = opts.Parent.Header.CompressedBytes
			return resultFor(m, tree, true, ""), nil
		}
	}
	if opts.Out == "" {
		return nil, errors.New("no archive named to write (--out)")
	}
	entries, compressed, err := writeArchive(ctx, root, opts.Out, tree.Entries, opts.Level)
	if err != nil {
		return nil, err
	}
	m := newManifest(entries, scanStarted)
	m.Header.CompressedBytes = compressed
	return resultFor(m, tree, false, opts.Out), nil
}

func resultFor(m *Manifest, tree *Tree, unchanged bool, archive string) *Result {
	return &Result{
		Type: "snapshot", Files: m.Header.Files, Dirs: m.Header.Dirs, Symlinks: m.Header.Symlinks,
		Bytes: m.Header.Bytes, CompressedBytes: m.Header.CompressedBytes, TreeHash: m.Header.TreeHash,
		Unchanged: unchanged, Archive: archive, Skipped: tree.Special, Manifest: m,
	}
}

// sameAsParent reports whether entries (fresh from a walk) hold the same
// content as the parent manifest. It fills in content hashes: from the parent
// where the metadata proves the file untouched, by reading it otherwise.
func sameAsParent(ctx context.Context, root string, entries []Entry, parent *Manifest) (bool, error) {
	same := len(entries) == len(parent.Entries)
	pi := 0
	for i := range entries {
		e := &entries[i]
		// Both lists are in walk order: advance the parent to e's path.
		for pi < len(parent.Entries) && comparePaths(parent.Entries[pi].Path, e.Path) < 0 {
			pi++
			same = false
		}
		var p *Entry
		if pi < len(parent.Entries) && parent.Entries[pi].Path == e.Path {
			p = &parent.Entries[pi]
			pi++
		}
		if e.Kind != KindFile {
			if p == nil || !e.sameContent(p) {
				same = false
			}
			continue
		}
		if p != nil && p.Kind == KindFile && e.sameStat(p) && !parent.racy(p) {
			e.Hash = p.Hash
			continue
		}
		if p == nil || p.Kind != KindFile || p.Mode != e.Mode || p.Size != e.Size {
			// Changed for sure; the hash is computed when the archive is written.
			return false, nil
		}
		h, err := hashFile(filepath.Join(root, filepath.FromSlash(e.Path)))
		if err != nil {
			return false, err
		}
		e.Hash = h
		if h != p.Hash {
			return false, nil
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
	}
	return same && pi == len(parent.Entries), nil
}

func hashFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeArchive writes entries as a tar.gz at out (atomically) and returns
// them with content hashes and metadata as read, dropping files that
// vanished since the walk. Small files are read and hashed ahead by workers
// while the main loop feeds the compressor, which runs on its own goroutines.
func writeArchive(ctx context.Context, root, out string, entries []Entry, level int) ([]Entry, int64, error) {
	if level == 0 {
		level = pgzip.BestSpeed
	}
	f, err := CreateAtomic(out, 0o644)
	if err != nil {
		return nil, 0, fmt.Errorf("create %s: %w", out, err)
	}
	defer f.Abort()
	cw := &countingWriter{w: f}
	zw, err := pgzip.NewWriterLevel(cw, level)
	if err != nil {
		return nil, 0, err
	}
	if err := zw.SetConcurrency(1<<20, 2*runtime.GOMAXPROCS(0)); err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pre := startPrefetch(ctx, root, entries)
	tw := tar.NewWriter(zw)
	uid, gid := os.Getuid(), os.Getgid()
	buf := make([]byte, 256*1024)
	kept := entries[:0:0]
	for i := range entries {
		if i&255 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		e := entries[i]
		hdr := &tar.Header{Name: e.Path, Mode: int64(e.Mode), ModTime: time.Unix(0, e.MTime), Uid: uid, Gid: gid}
		switch e.Kind {
		case KindDir:
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		case KindSymlink:
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = e.Link
		case KindFile:
			ok, err := pre.write(i, tw, hdr, &e, buf)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				kept = append(kept, e)
			}
			continue
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, 0, fmt.Errorf("write %s: %w", out, err)
		}
		kept = append(kept, e)
	}
	if err := tw.Close(); err != nil {
		return nil, 0, fmt.Errorf("write %s: %w", out, err)
	}
	if err := zw.Close(); err != nil {
		return nil, 0, fmt.Errorf("write %s: %w", out, err)
	}
	if err := f.Commit(); err != nil {
		return nil, 0, fmt.Errorf("write %s: %w", out, err)
	}
	return kept, cw.n, nil
}

const (
	prefetchFiles = 32        // files read ahead of the writer at most
	prefetchMax   = 256 << 10 // larger files are streamed by the writer itself (so at most 8 MiB ahead)
)

// prefetcher reads and hashes small files ahead of the archive writer.
type prefetcher struct {
	root  string
	slots []prefetched
	ahead chan struct{} // one token per file read ahead
	pool  sync.Pool
}

type prefetched struct {
	done     chan struct{}
	data     *[]byte
	fresh    Entry // metadata of the open file
	hash     string
	vanished bool
	err      error
}

func startPrefetch(ctx context.Context, root string, entries []Entry) *prefetcher {
	p := &prefetcher{root: root, slots: make([]prefetched, len(entries)), ahead: make(chan struct{}, prefetchFiles)}
	p.pool.New = func() any { b := make([]byte, 0, 64*1024); return &b }
	// Which files are read ahead is fixed before any goroutine starts: the
	// writer tells prefetched slots by their channel.
	var todo []int
	for i := range entries {
		if entries[i].Kind == KindFile && entries[i].Size <= prefetchMax {
			p.slots[i].done = make(chan struct{})
			todo = append(todo, i)
		}
	}
	jobs := make(chan int, prefetchFiles)
	go func() {
		defer close(jobs)
		for _, i := range todo {
			select {
			case p.ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range runtime.GOMAXPROCS(0) {
		go func() {
			for i := range jobs {
				p.read(i, &entries[i])
				close(p.slots[i].done)
			}
		}()
	}
	return p
}

func (p *prefetcher) read(i int, e *Entry) {
	s := &p.slots[i]
	f, err := os.Open(filepath.Join(p.root, filepath.FromSlash(e.Path)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			s.vanished = true
			return
		}
		s.err = fmt.Errorf("read %s: %w", e.Path, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.err = fmt.Errorf("stat %s: %w", e.Path, err)
		return
	}
	if !fi.Mode().IsRegular() {
		s.vanished = true
		return
	}
	s.fresh = entryFromInfo(e.Path, fi)
	bp := p.pool.Get().(*[]byte)
	b := (*bp)[:0]
	// Read to EOF: the content is what the archive holds, even if the file
	// changed size since the stat.
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			s.err = fmt.Errorf("read %s: %w", e.Path, err)
			return
		}
	}
	*bp = b
	s.data = bp
	sum := sha256.Sum256(b)
	s.hash = hex.EncodeToString(sum[:])
	s.fresh.Size = int64(len(b))
}

// write adds file i to the archive, from the prefetched bytes or by
// streaming it. ok is false when the file vanished after the walk.
func (p *prefetcher) write(i int, tw *tar.Writer, hdr *tar.Header, e *Entry, buf []byte) (ok bool, err error) {
	s := &p.slots[i]
	if s.done == nil {
		return writeFileEntry(tw, hdr, p.root, e, buf)
	}
	<-s.done
	<-p.ahead
	if s.err != nil || s.vanished {
		return false, s.err
	}
	defer func() {
		*s.data = (*s.data)[:0]
		p.pool.Put(s.data)
		s.data = nil
	}()
	e.Mode, e.Size, e.MTime, e.CTime, e.Ino, e.Hash = s.fresh.Mode, s.fresh.Size, s.fresh.MTime, s.fresh.CTime, s.fresh.Ino, s.hash
	hdr.Typeflag = tar.TypeReg
	hdr.Mode = int64(e.Mode)
	hdr.ModTime = time.Unix(0, e.MTime)
	hdr.Size = e.Size
	if err := tw.WriteHeader(hdr); err != nil {
		return false, err
	}
	if _, err := tw.Write(*s.data); err != nil {
		return false, err
	}
	return true, nil
}

// writeFileEntry adds one large file by streaming it. Its header and
// manifest entry take the metadata of the open file, so they describe the
// bytes that were read. ok is false when the file vanished after the walk.
func writeFileEntry(tw *tar.Writer, hdr *tar.Header, root string, e *Entry, buf []byte) (ok bool, err error) {
	name := filepath.Join(root, filepath.FromSlash(e.Path))
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("read %s: %w", e.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", e.Path, err)
	}
	if !fi.Mode().IsRegular() {
		return false, nil // replaced by something else since the walk
	}
	fresh := entryFromInfo(e.Path, fi)
	e.Mode, e.Size, e.MTime, e.CTime, e.Ino = fresh.Mode, fresh.Size, fresh.MTime, fresh.CTime, fresh.Ino
	hdr.Typeflag = tar.TypeReg
	hdr.Mode = int64(e.Mode)
	hdr.ModTime = time.Unix(0, e.MTime)
	hdr.Size = e.Size
	if err := tw.WriteHeader(hdr); err != nil {
		return false, err
	}
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(tw, h), io.LimitReader(f, e.Size), buf)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", e.Path, err)
	}
	if n != e.Size {
		return false, fmt.Errorf("%s shrank while it was being captured (%d of %d bytes); take the snapshot again", e.Path, n, e.Size)
	}
	e.Hash = hex.EncodeToString(h.Sum(nil))
	return true, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
