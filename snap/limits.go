package snap

import "fmt"

// Limits bound what a snapshot may hold, so a crafted archive cannot
// exhaust disk, memory or time. They hold at both ends: a save refuses a
// tree past them (with a LimitError), so that every snapshot a save writes
// restores; a manifest records the limits its snapshot was taken with when
// they differ from DefaultLimits, and a restore through it uses them.
type Limits struct {
	MaxEntries int   `json:"max_entries,omitempty"` // entries of any kind
	MaxBytes   int64 `json:"max_bytes,omitempty"`   // total file content
	MaxDepth   int   `json:"max_depth,omitempty"`   // path elements
	MaxPath    int   `json:"max_path,omitempty"`    // bytes in one path or link target
}

// DefaultLimits fit any project tree Rewind is meant for.
var DefaultLimits = Limits{MaxEntries: 1 << 20, MaxBytes: 8 << 30, MaxDepth: 128, MaxPath: 4096}

// Or returns l with every zero field taken from d.
func (l Limits) Or(d Limits) Limits {
	if l.MaxEntries == 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxPath == 0 {
		l.MaxPath = d.MaxPath
	}
	return l
}

// LimitError is a tree a save refuses because it is past a limit: the entry
// that crossed it (or "" for a total), which limit, and its value.
type LimitError struct {
	Path  string
	Limit string // max_entries, max_bytes, max_depth, max_path
	Max   int64
	What  string // what crossed it, e.g. "130 path elements"
}

func (e *LimitError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("the tree holds %s, past the limit of %d (%s) a restore enforces; nothing was saved", e.What, e.Max, e.Limit)
	}
	return fmt.Sprintf("%s: %s, past the limit of %d (%s) a restore enforces; nothing was saved", e.Path, e.What, e.Max, e.Limit)
}

// check refuses entries past l, the way a restore would.
func (l Limits) check(entries []Entry) error {
	c := limitCount{l: l}
	for i := range entries {
		if err := c.add(&entries[i]); err != nil {
			return err
		}
	}
	return c.done()
}

// limitCount is Limits.check taking the entries one at a time: add checks
// an entry's own limits and the totals so far, done the tree's totals.
type limitCount struct {
	l       Limits
	entries int
	bytes   int64 // of file content
}

func (c *limitCount) add(e *Entry) error {
	l := c.l
	if n := len(e.Path); n > l.MaxPath {
		return &LimitError{Path: e.Path, Limit: "max_path", Max: int64(l.MaxPath), What: fmt.Sprintf("a path of %d bytes", n)}
	}
	if n := len(e.Link); n > l.MaxPath {
		return &LimitError{Path: e.Path, Limit: "max_path", Max: int64(l.MaxPath), What: fmt.Sprintf("a symlink target of %d bytes", n)}
	}
	if d := depth(e.Path); d > l.MaxDepth {
		return &LimitError{Path: e.Path, Limit: "max_depth", Max: int64(l.MaxDepth), What: fmt.Sprintf("%d path elements", d)}
	}
	c.entries++
	if e.Kind == KindFile {
		c.bytes += e.Size
	}
	if c.entries > l.MaxEntries || c.bytes > l.MaxBytes {
		return c.done() // (as soon as it is past: a walk stops there)
	}
	return nil
}

func (c *limitCount) done() error {
	if c.entries > c.l.MaxEntries {
		return &LimitError{Limit: "max_entries", Max: int64(c.l.MaxEntries), What: fmt.Sprintf("%d entries", c.entries)}
	}
	if c.bytes > c.l.MaxBytes {
		return &LimitError{Limit: "max_bytes", Max: c.l.MaxBytes, What: fmt.Sprintf("%d bytes of file content", c.bytes)}
	}
	return nil
}

func depth(p string) int {
	n := 1
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			n++
		}
	}
	return n
}
