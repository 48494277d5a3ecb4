package fork

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	gzip "github.com/klauspost/pgzip"
)

// OpenSnapshots returns the transcript bytes that a chain of checkpoint snapshots holds: paths
// are transcript.jsonl.gz files, oldest first, each holding the bytes appended since the one
// before it, and each possibly several gzip members (concatenated members are one gzip stream).
// Inflated and concatenated they are the transcript's bytes. Every file is opened at once (a
// missing one is an error here), but inflated only when the reading reaches it, through one
// gzip reader reset for each, so a long chain costs the memory of one. The reader is pgzip's:
// the standard library's format, inflating ahead in a second goroutine (measured faster on a
// chain of several MB, see BenchmarkOpenSnapshots). Read errors name the file.
func OpenSnapshots(paths []string) (io.ReadCloser, error) {
	r := &snapshotReader{paths: paths}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("open snapshot: %w", err)
		}
		r.files = append(r.files, f)
	}
	if len(paths) > 0 {
		if err := r.start(0); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// snapshotReader inflates a chain of snapshot files one after the other.
type snapshotReader struct {
	paths []string
	files []*os.File
	i     int // the file being inflated
	br    *bufio.Reader
	zr    *gzip.Reader
}

// start begins inflating file i.
func (r *snapshotReader) start(i int) error {
	r.i = i
	var err error
	if r.zr == nil {
		r.br = bufio.NewReaderSize(r.files[i], 1<<20)
		r.zr, err = gzip.NewReader(r.br)
	} else {
		r.br.Reset(r.files[i])
		err = r.zr.Reset(r.br)
	}
	if err != nil {
		return fmt.Errorf("snapshot %s is not gzip: %w", r.paths[i], err)
	}
	return nil
}

func (r *snapshotReader) Read(p []byte) (int, error) {
	for r.i < len(r.files) {
		n, err := r.zr.Read(p)
		switch {
		case err == io.EOF && r.i+1 < len(r.files):
			if err := r.start(r.i + 1); err != nil {
				return n, err
			}
		case err == io.EOF:
			r.i++
		case err != nil:
			return n, fmt.Errorf("inflate snapshot %s: %w", r.paths[r.i], err)
		}
		if n > 0 || len(p) == 0 {
			return n, nil
		}
	}
	return 0, io.EOF
}

// Close closes the files and stops the inflating goroutine.
func (r *snapshotReader) Close() error {
	if r.zr != nil {
		r.zr.Close()
	}
	for _, f := range r.files {
		f.Close()
	}
	return nil
}

// windowRecorder keeps, as bytes stream through it, the first and the last window bytes, so
// that an inflated snapshot can be checked against a cursor's hashes and line ending without
// reading it twice.
type windowRecorder struct {
	window int
	head   []byte
	tail   []byte // the last ≤ window bytes seen
	total  int64
}

func newWindowRecorder(window int) *windowRecorder {
	return &windowRecorder{window: window, tail: make([]byte, 0, 2*window)}
}

func (w *windowRecorder) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if room := w.window - len(w.head); room > 0 {
		w.head = append(w.head, p[:min(room, len(p))]...)
	}
	if len(p) >= w.window {
		w.tail = append(w.tail[:0], p[len(p)-w.window:]...)
		return len(p), nil
	}
	if len(w.tail)+len(p) > cap(w.tail) {
		keep := w.window - len(p)
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-keep:]...)
	}
	w.tail = append(w.tail, p...) // the buffer holds up to 2× window to amortise the moves
	return len(p), nil
}

// last returns the last min(window, total) bytes.
func (w *windowRecorder) last() []byte {
	if len(w.tail) > w.window {
		return w.tail[len(w.tail)-w.window:]
	}
	return w.tail
}

// ReadAt serves reads that fall inside the recorded head or last window; others fail. It lets
// Checkpoint.mismatch check streamed bytes.
func (w *windowRecorder) ReadAt(p []byte, off int64) (int, error) {
	if off >= 0 && off+int64(len(p)) <= int64(len(w.head)) {
		return copy(p, w.head[off:]), nil
	}
	last := w.last()
	start := w.total - int64(len(last))
	if off >= start && off+int64(len(p)) <= w.total {
		return copy(p, last[off-start:]), nil
	}
	return 0, errors.New("read outside the recorded windows")
}
