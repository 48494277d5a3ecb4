package snap

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"strconv"
	"sync"
)

// PathList is a list of paths a restore reports (what it wrote, deleted,
// changed the mode of), which may be as long as the tree: a restore that
// deletes a million added files in the folders it keeps names each. Past
// listHeld paths it is written to a temporary file (TMPDIR) instead of
// held, and read back as it is printed; WriteJSON prints it inside a JSON
// value without holding it either. Where no temporary file can be made it
// is held, as before.
type PathList struct {
	n     int
	held  []string
	spill *listSpill // past listHeld: every path, each ended by a NUL (no path holds one)
	err   error      // the first write to the spill that failed: the list is short
	most  int        // instead of listHeld (tests)
	dir   string     // the temporary file's folder: "" for TMPDIR's
}

// listHeld is how many paths a PathList holds before it writes them out.
// Tests set fewer (RestoreOptions.listHeld).
const listHeld = 8192

type listSpill struct {
	id int
	f  *os.File
	w  *bufio.Writer
}

// spills are the lists written out and not yet closed, by id: the
// placeholder a list's MarshalJSON writes names its id (see WriteJSON).
var spills struct {
	sync.Mutex
	next int
	byID map[int]*listSpill
}

// addTuned is Add, the list given, when it is empty, the most paths it
// holds (0: listHeld) and the folder of its temporary file ("": TMPDIR's)
// that a restore's options set (tests): an empty list stays the zero one.
func (l *PathList) addTuned(path string, most int, dir string) {
	if l.n == 0 {
		l.most, l.dir = most, dir
	}
	l.Add(path)
}

// Add appends path to the list.
func (l *PathList) Add(path string) {
	l.n++
	if l.err != nil {
		return
	}
	if l.spill == nil {
		if len(l.held) < cmp.Or(l.most, listHeld) {
			l.held = append(l.held, path)
			return
		}
		l.spill = newListSpill(l.dir)
		if l.spill == nil {
			l.held = append(l.held, path)
			return
		}
		for _, p := range l.held {
			l.write(p)
		}
		l.held = nil
	}
	l.write(path)
}

func (l *PathList) write(path string) {
	if l.err != nil {
		return
	}
	l.spill.w.WriteString(path)
	if err := l.spill.w.WriteByte(0); err != nil {
		l.err = fmt.Errorf("listing paths in %s: %w (set TMPDIR to a folder with room)", l.spill.f.Name(), err)
	}
}

// newListSpill makes a temporary file for a list in dir ("": TMPDIR's),
// or returns nil where it cannot (the list is then held). The file is
// removed at once where the system lets an open file be (it goes when it
// is closed, or the process ends); elsewhere when the list is closed.
func newListSpill(dir string) *listSpill {
	f, err := os.CreateTemp(dir, "rewind-paths-*")
	if err != nil {
		return nil
	}
	os.Remove(f.Name()) // (where the system lets an open file be removed)
	s := &listSpill{f: f, w: bufio.NewWriterSize(f, 64<<10)}
	spills.Lock()
	if spills.byID == nil {
		spills.byID = map[int]*listSpill{}
	}
	spills.next++
	s.id = spills.next
	spills.byID[s.id] = s
	spills.Unlock()
	return s
}

// Len is how many paths the list has.
func (l *PathList) Len() int { return l.n }

// IsZero reports whether the list is empty (for JSON's omitzero).
func (l PathList) IsZero() bool { return l.n == 0 }

// Err says why the list lacks paths it was given, if it does: its
// temporary file could not be written.
func (l *PathList) Err() error { return l.err }

// All yields the list's paths in the order they were added. A list written
// out is read back from its file, which may fail: Err says so after.
func (l *PathList) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		if l.spill == nil {
			for _, p := range l.held {
				if !yield(p) {
					return
				}
			}
			return
		}
		if l.err == nil {
			if err := l.spill.w.Flush(); err != nil {
				l.err = fmt.Errorf("listing paths in %s: %w (set TMPDIR to a folder with room)", l.spill.f.Name(), err)
			}
		}
		if l.err != nil {
			return
		}
		r := bufio.NewReaderSize(io.NewSectionReader(l.spill.f, 0, 1<<62), 64<<10)
		for {
			b, err := r.ReadSlice(0)
			if err == bufio.ErrBufferFull { // a path longer than the buffer
				long := append([]byte(nil), b...)
				for err == bufio.ErrBufferFull {
					b, err = r.ReadSlice(0)
					long = append(long, b...)
				}
				b = long
			}
			if err == io.EOF && len(b) == 0 {
				return
			}
			if err != nil {
				l.err = fmt.Errorf("reading the paths listed in %s: %w", l.spill.f.Name(), err)
				return
			}
			if !yield(string(b[:len(b)-1])) {
				return
			}
		}
	}
}

// Close removes the list's temporary file, if it has one; the list is
// empty after.
func (l *PathList) Close() error {
	s := l.spill
	*l = PathList{}
	if s == nil {
		return nil
	}
	spills.Lock()
	delete(spills.byID, s.id)
	spills.Unlock()
	err := s.f.Close()
	os.Remove(s.f.Name()) // (already gone, where the system let it be removed open)
	return err
}

// holePrefix begins the JSON string a list written out marshals to: a
// placeholder WriteJSON replaces by the list. It holds a NUL and a token
// drawn for the process, so no string of the value around it (a path, a
// prompt from a transcript) marshals to it by chance or by design.
var holePrefix = sync.OnceValue(func() string {
	return `"\u0000rewind-paths-` + rand.Text() + "-"
})

// MarshalJSON writes the list as a JSON array of strings; one written out
// to a file is a placeholder, which WriteJSON replaces by its paths.
func (l PathList) MarshalJSON() ([]byte, error) {
	if l.spill == nil {
		var b bytes.Buffer
		err := writeArray(&b, slices.Values(l.held))
		return b.Bytes(), err
	}
	if l.err != nil {
		return nil, l.err
	}
	return []byte(holePrefix() + strconv.Itoa(l.spill.id) + `"`), nil
}

// UnmarshalJSON reads a JSON array of strings into a held list.
func (l *PathList) UnmarshalJSON(b []byte) error {
	var held []string
	if err := json.Unmarshal(b, &held); err != nil {
		return err
	}
	*l = PathList{n: len(held), held: held}
	return nil
}

// WriteJSON writes v to w as JSON on one line, as a json.Encoder does
// (without escaping HTML), and each PathList inside v that was written out
// as the array of its paths, read from its file as it is written: an
// output as long as the tree is never held.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b := buf.Bytes()
	spills.Lock()
	none := len(spills.byID) == 0
	spills.Unlock()
	if none { // (no list is written out: the value is all there is)
		_, err := w.Write(b)
		return err
	}
	hole := []byte(holePrefix())
	for {
		i := bytes.Index(b, hole)
		if i < 0 {
			_, err := w.Write(b)
			return err
		}
		if _, err := w.Write(b[:i]); err != nil {
			return err
		}
		b = b[i+len(hole):]
		end := bytes.IndexByte(b, '"')
		id, err := strconv.Atoi(string(b[:max(end, 0)]))
		if end < 0 || err != nil {
			return errors.New("writing JSON: a list's placeholder is damaged")
		}
		b = b[end+1:]
		spills.Lock()
		s := spills.byID[id]
		spills.Unlock()
		if s == nil {
			return errors.New("writing JSON: a list was closed before it was written")
		}
		if err := writeSpilled(w, s); err != nil {
			return err
		}
	}
}

// writeSpilled writes the paths in s as a JSON array.
func writeSpilled(w io.Writer, s *listSpill) error {
	l := &PathList{spill: s}
	bw := bufio.NewWriterSize(w, 64<<10)
	writeArray(bw, l.All())
	if l.err != nil {
		return l.err
	}
	return bw.Flush()
}

// writeArray writes paths as a JSON array of strings, as a json.Encoder
// that does not escape HTML would.
func writeArray(w interface {
	io.Writer
	io.ByteWriter
}, paths iter.Seq[string]) error {
	var item bytes.Buffer
	enc := json.NewEncoder(&item)
	enc.SetEscapeHTML(false)
	w.WriteByte('[')
	first := true
	for p := range paths {
		if !first {
			w.WriteByte(',')
		}
		first = false
		item.Reset()
		enc.Encode(p) // (a string always encodes)
		w.Write(bytes.TrimSuffix(item.Bytes(), []byte("\n")))
	}
	return w.WriteByte(']')
}
