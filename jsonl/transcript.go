package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Errors the scans return, for errors.Is.
var (
	// ErrFewerPrompts: the transcript holds fewer user prompts than asked for.
	ErrFewerPrompts = errors.New("fewer prompts than asked for")
	// ErrEventNotFound: no complete line carries the event id.
	ErrEventNotFound = errors.New("event id not found")
	// ErrNoEventIDs: the dialect's lines carry no event ids (codex).
	ErrNoEventIDs = errors.New("agent writes no event ids")
	// ErrUnknownAgent: the dialect could not be told from the content or the path.
	ErrUnknownAgent = errors.New("cannot tell which agent wrote the transcript")
)

// OpenError is a transcript Open cannot read: it cannot be opened or is not a regular file
// (Err says which). A transcript that does not exist is not one: it opens as empty.
type OpenError struct {
	Path string
	Err  error
}

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// UnknownDialectError is an agent name no dialect has (LookupDialect).
type UnknownDialectError struct{ Name string }

func (e *UnknownDialectError) Error() string {
	return fmt.Sprintf("unknown agent %q (known: %s)", e.Name, strings.Join(DialectNames(), ", "))
}

// Transcript is one transcript file opened for reading. Its size and the end of its complete
// data are fixed when it is opened; bytes appended later are not seen.
type Transcript struct {
	Path    string
	Dialect *Dialect // nil only for an empty transcript whose agent could not be told
	ra      io.ReaderAt
	closer  io.Closer
	size    int64
	end     int64
	exists  bool
}

// Open opens the transcript at path. With d nil, the dialect is detected from the content and
// the path; when that fails Dialect stays nil and the operations that need one (turns, back,
// at) fail with ErrUnknownAgent, while Cursor and Verify still work. A file that does not exist is an empty transcript (agents create theirs after the
// first prompt). Anything but a regular file (a FIFO, a device, a folder) is refused, and
// opening it never blocks. The caller must Close it.
func Open(path string, d *Dialect) (*Transcript, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		t := &Transcript{Path: path, ra: bytes.NewReader(nil), Dialect: d}
		if d == nil {
			t.Dialect = Detect(path, nil).Dialect
		}
		return t, nil
	}
	if err != nil {
		return nil, &OpenError{Path: path, Err: fmt.Errorf("open transcript: %w", err)}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &OpenError{Path: path, Err: fmt.Errorf("stat transcript %s: %w", path, err)}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &OpenError{Path: path, Err: fmt.Errorf("transcript %s is not a regular file (%s)", path, fileType(fi.Mode()))}
	}
	t, err := newTranscript(path, f, fi.Size(), d)
	if err != nil {
		f.Close()
		return nil, err
	}
	t.closer = f
	t.exists = true
	return t, nil
}

// New reads a transcript of size bytes from ra (a file, a bytes.Reader of a checkpoint's
// inflated transcript, …). With d nil the dialect is detected from the content and path (path
// may be "").
func New(path string, ra io.ReaderAt, size int64, d *Dialect) (*Transcript, error) {
	t, err := newTranscript(path, ra, size, d)
	if err == nil {
		t.exists = true
	}
	return t, err
}

func newTranscript(path string, ra io.ReaderAt, size int64, d *Dialect) (*Transcript, error) {
	end, err := LastNewline(ra, size)
	if err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", path, err)
	}
	t := &Transcript{Path: path, Dialect: d, ra: ra, size: size, end: end}
	if d == nil {
		head, err := t.head()
		if err != nil {
			return nil, err
		}
		t.Dialect = Detect(path, head).Dialect
	}
	return t, nil
}

// fileType names what a path that is not a regular file is.
func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

func displayPath(p string) string {
	if p == "" {
		return "transcript"
	}
	return "transcript " + p
}

// head returns the first HashWindow bytes (fewer when the file is shorter).
func (t *Transcript) head() ([]byte, error) {
	n := min(t.size, HashWindow)
	buf := make([]byte, n)
	if _, err := t.ra.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
	}
	return buf, nil
}

// Close closes the file, if one was opened.
func (t *Transcript) Close() error {
	if t.closer == nil {
		return nil
	}
	return t.closer.Close()
}

// Size is the file's size when it was opened (0 when it does not exist).
func (t *Transcript) Size() int64 { return t.size }

// End is the end of the complete data: just past the last newline.
func (t *Transcript) End() int64 { return t.end }

// Exists reports whether the file existed when it was opened.
func (t *Transcript) Exists() bool { return t.exists }

// ReaderAt gives the bytes, for callers that copy a prefix (fork).
func (t *Transcript) ReaderAt() io.ReaderAt { return t.ra }

// Lines reads the complete lines from offset from forward, calling fn for each; fn returning
// false stops the read. The incomplete last line is not passed.
func (t *Transcript) Lines(from int64, fn func(Line) bool) error {
	if from >= t.end {
		return nil
	}
	r := NewReader(io.NewSectionReader(t.ra, from, t.end-from), from)
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		if !l.Complete || !fn(l) {
			return nil
		}
	}
}

// Stats reads the whole transcript and counts its lines (cost ∝ file size).
func (t *Transcript) Stats() (Stats, error) {
	var s Stats
	err := t.Lines(0, func(l Line) bool { s.count(l.Data); return true })
	s.Incomplete = t.size - t.end
	return s, err
}

func (t *Transcript) needDialect() error {
	if t.Dialect == nil && t.end > 0 {
		return fmt.Errorf("%s: %w", displayPath(t.Path), ErrUnknownAgent)
	}
	return nil
}

// Detect tells the agent from the first 64 KiB of content and the path, whatever dialect the
// transcript was opened with.
func (t *Transcript) Detect() (Detection, error) {
	head, err := t.head()
	if err != nil {
		return Detection{}, err
	}
	return Detect(t.Path, head), nil
}
