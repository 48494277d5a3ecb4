package snap

import (
	"archive/tar"
	"bufio"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"

	"rewind.dev/internal/layout"
)

// An archive Rewind did not write (tar's own, which lists a folder's names
// in the order the file system gives them) is out of walk order, and a
// restore read it against maps of every path, planned over the whole tree:
// about 330 bytes a file, held. It is copied into walk order instead, in a
// temporary folder (TMPDIR), and the copy restored as one of Rewind's. The
// copy is an external sort: the entries are held sortRun at a time, each
// run sorted and written out, the files' content written to a spool in
// archive order, then the runs merged into a new archive whose files are
// read back from the spool. Memory holds a run and a buffer per run; the
// disk holds the spool and the copy for a moment (twice the content), then
// the copy until the restore ends.
//
// An archive that implies folders, not listing them (tar's of a list of
// files), is copied into walk order too, each such folder listed before
// the first entry in it, as the restore takes one it implies: with the
// mode of the folder the tree holds there, which it keeps, or 0755.

// sortRun is how many entries the copy into walk order sorts in memory at
// a time. Tests make runs of a few (RestoreOptions.sortRun).
const sortRun = 1 << 15

// inWalkOrder copies archive into walk order, in a temporary folder, and
// returns the copy's path and how to remove it; root is the tree it is
// restored over, whose folders give those the archive implies their modes.
// Only what each entry is checked for alone is checked here (names, kinds,
// sizes, the limits): the copy is read in walk order, which finds
// duplicates and conflicts. The entries are sorted perRun at a time
// (sortRun); the copy is made in tmp ("": TMPDIR's).
func inWalkOrder(ctx context.Context, archive, root string, limits Limits, perRun int, tmp string) (sorted string, remove func(), err error) {
	dir, err := os.MkdirTemp(tmp, "rewind-sorted-")
	if err != nil {
		return "", nil, fmt.Errorf("archive %s is not in walk order (not one Rewind wrote): copy it into walk order in a temporary folder (set TMPDIR to a folder with room for twice its content): %w", archive, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	// (what is wrong with the archive is told as it is; what went wrong
	// with the copy, where it was made)
	wrap := func(err error) error {
		return fmt.Errorf("archive %s is not in walk order (not one Rewind wrote): copy it into walk order in %s (set TMPDIR to a folder with room for twice its content): %w", archive, dir, err)
	}
	spool, err := createPrivate(filepath.Join(dir, "content"))
	if err != nil {
		return "", nil, wrap(err)
	}
	defer spool.Close()
	runs, err := createPrivate(filepath.Join(dir, "runs"))
	if err != nil {
		return "", nil, wrap(err)
	}
	defer runs.Close()
	bounds, err := writeRuns(ctx, archive, limits, perRun, spool, runs)
	if we := (*copyError)(nil); errors.As(err, &we) {
		return "", nil, wrap(we.err)
	}
	if err != nil {
		return "", nil, err
	}
	sorted = filepath.Join(dir, "sorted.tar.gz")
	if err := mergeRuns(ctx, sorted, runs, bounds, spool, root); err != nil {
		if ctx.Err() != nil {
			return "", nil, err
		}
		return "", nil, wrap(err)
	}
	os.Remove(spool.Name()) // (the copy holds the content now)
	os.Remove(runs.Name())
	return sorted, func() { os.RemoveAll(dir) }, nil
}

// copyError is a failure to write the copy's own files (the disk), not
// the archive's.
type copyError struct{ err error }

func (e *copyError) Error() string { return e.err.Error() }

// copyWriter records what its writer fails to write.
type copyWriter struct {
	w   io.Writer
	err error
}

func (c *copyWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// run is where a sorted run lies in the runs file, and how many records.
type run struct{ start, end, n int64 }

// writeRuns reads archive, writing each file's content to spool (its
// place there in the entry's COff) and the entries, perRun at a time
// sorted, to runs.
func writeRuns(ctx context.Context, archive string, limits Limits, perRun int, spool, runs *os.File) ([]run, error) {
	as, err := openArchive(archive, limits, Folding{})
	if err != nil {
		return nil, err
	}
	defer as.Close()
	as.unchecked = true
	sw := bufio.NewWriterSize(spool, 256<<10)
	cw := &copyWriter{w: sw}
	rw := bufio.NewWriterSize(runs, 256<<10)
	var bounds []run
	var held []Entry
	var at, written int64 // the spool's length, the runs file's
	var buf []byte
	copyBuf := make([]byte, 32<<10)
	flush := func() error {
		// Stable: a path listed twice stays in archive order, for the copy's
		// reader to refuse the second.
		slices.SortStableFunc(held, func(a, b Entry) int { return comparePaths(a.Path, b.Path) })
		r := run{start: written}
		for i := range held {
			buf, _ = appendRecord(buf[:0], 0, &held[i], "", "")
			if _, err := rw.Write(buf); err != nil {
				return &copyError{err}
			}
			written += int64(len(buf))
		}
		r.end, r.n = written, int64(len(held))
		bounds = append(bounds, r)
		held = held[:0]
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, content, err := as.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := as.refuseWhiteout(e); err != nil {
			return nil, err
		}
		if content != nil {
			n, err := io.CopyBuffer(cw, content, copyBuf) // (io.Copy would make a buffer a file)
			if cw.err != nil {
				return nil, &copyError{cw.err}
			}
			if err != nil {
				return nil, archiveReadErr(e, err)
			}
			e.COff = at
			at += n
		}
		held = append(held, *e)
		if len(held) == perRun {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if len(held) > 0 {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := sw.Flush(); err != nil {
		return nil, &copyError{err}
	}
	if err := rw.Flush(); err != nil {
		return nil, &copyError{err}
	}
	return bounds, nil
}

// createPrivate creates (or empties) the file name, readable by its owner
// only: it holds the archive's content.
func createPrivate(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, layout.FileMode)
}

// mergeRuns writes the entries of the runs, merged into walk order, to a
// new archive at name, each file's content read back from spool, and each
// folder they imply before the first entry in it, with the mode of root's
// folder there (or 0755).
func mergeRuns(ctx context.Context, name string, runs *os.File, bounds []run, spool *os.File, root string) error {
	out, err := createPrivate(name)
	if err != nil {
		return err
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 256<<10)
	zw, err := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	h := &runHeap{}
	for _, b := range bounds {
		rr := &runReader{r: spillReader{r: bufio.NewReaderSize(io.NewSectionReader(runs, b.start, b.end-b.start), 32<<10)}, left: b.n, order: len(h.runs)}
		if ok, err := rr.next(); err != nil {
			return err
		} else if ok {
			h.runs = append(h.runs, rr)
		}
	}
	heap.Init(h)
	copyBuf := make([]byte, 256<<10)
	uid, gid := os.Getuid(), os.Getgid()
	var up []Entry // the entries written that the one at hand may be inside, each inside the one before
	var implied []string
	for h.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		rr := h.runs[0]
		e := &rr.e
		for len(up) > 0 && !strings.HasPrefix(e.Path, up[len(up)-1].Path+"/") {
			up = up[:len(up)-1]
		}
		top := ""
		if len(up) > 0 {
			top = up[len(up)-1].Path
		}
		if len(up) == 0 || up[len(up)-1].Kind == KindDir { // (inside a file: the copy's reader refuses it)
			implied = implied[:0]
			for d := path.Dir(e.Path); d != "." && d != top; d = path.Dir(d) {
				implied = append(implied, d)
			}
			for _, d := range slices.Backward(implied) {
				f := Entry{Path: d, Kind: KindDir, Mode: treeFolderMode(root, d)}
				hdr, _ := tarHeader(&f, uid, gid)
				if err := tw.WriteHeader(hdr); err != nil {
					return err
				}
				up = append(up, f)
			}
		}
		hdr, _ := tarHeader(e, uid, gid) // (every kind the archive held)
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if e.Kind == KindFile {
			if _, err := io.CopyBuffer(tw, io.NewSectionReader(spool, e.COff, e.Size), copyBuf); err != nil {
				return err
			}
		}
		up = append(up, Entry{Path: e.Path, Kind: e.Kind})
		if ok, err := rr.next(); err != nil {
			return err
		} else if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return out.Close()
}

// treeFolderMode is the mode of the folder at name in the tree at root,
// where it and every folder above it is a real one (no symlink), or 0755:
// the restore keeps a folder it implies as it is, and makes one so.
func treeFolderMode(root, name string) fs.FileMode {
	var fi fs.FileInfo
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			continue
		}
		var err error
		if fi, err = os.Lstat(filepath.Join(root, filepath.FromSlash(name[:i]))); err != nil || !fi.IsDir() {
			return 0o755
		}
	}
	return fi.Mode().Perm()
}

// runReader reads one sorted run back, an entry at a time.
type runReader struct {
	r     spillReader
	left  int64
	order int // the run's place: of two entries of one path, the earlier run's first
	e     Entry
}

func (rr *runReader) next() (bool, error) {
	if rr.left == 0 {
		return false, nil
	}
	rr.left--
	if _, _, err := rr.r.next(&rr.e); err != nil {
		return false, fmt.Errorf("read a sorted run back: %w", err)
	}
	return true, nil
}

// runHeap orders the runs by the entry each is at.
type runHeap struct{ runs []*runReader }

func (h *runHeap) Len() int { return len(h.runs) }
func (h *runHeap) Less(i, j int) bool {
	if c := comparePaths(h.runs[i].e.Path, h.runs[j].e.Path); c != 0 {
		return c < 0
	}
	return h.runs[i].order < h.runs[j].order
}
func (h *runHeap) Swap(i, j int) { h.runs[i], h.runs[j] = h.runs[j], h.runs[i] }
func (h *runHeap) Push(x any)    { h.runs = append(h.runs, x.(*runReader)) }
func (h *runHeap) Pop() any {
	x := h.runs[len(h.runs)-1]
	h.runs = h.runs[:len(h.runs)-1]
	return x
}
