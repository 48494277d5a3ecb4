package fork

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	gzip "github.com/klauspost/pgzip"
)

// openSnapshots returns the inflated bytes of the checkpoint transcripts, in order, as one
// stream. A checkpoint's transcript.jsonl.gz may itself be several gzip members (a checkpoint
// that appended to an earlier one); the gzip reader reads concatenated members as one stream (pgzip: the
// standard library's reader, inflating ahead in a second goroutine).
// Several paths are concatenated too, for a chain of checkpoints that each hold only the bytes
// appended since the previous one.
func openSnapshots(paths []string) (io.Reader, func(), error) {
	var (
		readers []io.Reader
		closers []func()
	)
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("open snapshot: %w", err)
		}
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			f.Close()
			closeAll()
			return nil, nil, fmt.Errorf("snapshot %s is not gzip: %w", p, err)
		}
		closers = append(closers, func() { zr.Close(); f.Close() })
		readers = append(readers, &namedReader{r: zr, path: p})
	}
	return io.MultiReader(readers...), closeAll, nil
}

// namedReader names the snapshot in read errors (a corrupt or truncated .gz).
type namedReader struct {
	r    io.Reader
	path string
}

func (n *namedReader) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("inflate snapshot %s: %w", n.path, err)
	}
	return k, err
}

// ctxReader stops a long copy when the context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
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
