package jsonl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// HashWindow is how many bytes the cursor hashes at each end of the prefix.
const HashWindow = 64 << 10

// Cursor records where a checkpoint was in a transcript: the end of its complete data, with
// hashes that tell later whether the file still extends those bytes.
type Cursor struct {
	Agent string `json:"agent"`
	// ByteOffsetEnd is the end of the last complete line: just past its newline.
	ByteOffsetEnd int64 `json:"byte_offset_end"`
	// PrefixSHA256 is the hex SHA-256 of the first min(64 KiB, ByteOffsetEnd) bytes.
	PrefixSHA256 string `json:"prefix_sha256"`
	// TailSHA256 is the hex SHA-256 of the min(64 KiB, ByteOffsetEnd) bytes before ByteOffsetEnd.
	TailSHA256 string `json:"tail_sha256"`
	// LastEventID is the event id of the last complete line that has one ("" when none is
	// found near the end, or the agent writes no ids).
	LastEventID string `json:"last_event_id"`
	// Lines is the number of complete lines; null unless counted (CursorOptions.CountLines),
	// because counting reads the whole file.
	Lines *int64 `json:"lines"`

	// For a dialect whose agent rewrites its first line after writing it (Droid adds a field
	// to session_start once the SessionStart hook has run): the first line's length, and the
	// hashes of the window after it and of the window before ByteOffsetEnd leaving it out, so
	// that Locate finds the cursor again once the line has changed length.
	FirstLine      int64  `json:"first_line_bytes,omitempty"`
	BodySHA256     string `json:"body_sha256,omitempty"`
	BodyTailSHA256 string `json:"body_tail_sha256,omitempty"`
}

// CursorOptions tunes Cursor.
type CursorOptions struct {
	// CountLines fills Cursor.Lines by reading the whole file (cost ∝ file size).
	CountLines bool
}

// lastEventScan bounds the search for the last event id: at most this many complete lines
// from the end.
const lastEventScan = 64

// Cursor computes the transcript's cursor. It reads the first 64 KiB, the 64 KiB before the end
// of the complete data, and the last lines back to the newest that has an event id (at most 64
// lines) — never the whole file unless asked to count lines.
func (t *Transcript) Cursor(ctx context.Context, opts CursorOptions) (Cursor, error) {
	c := Cursor{ByteOffsetEnd: t.end}
	if t.Dialect != nil {
		c.Agent = t.Dialect.Name
	}
	var err error
	if c.PrefixSHA256, c.TailSHA256, err = windowHashes(t.ra, t.end); err != nil {
		return Cursor{}, fmt.Errorf("hash %s: %w", displayPath(t.Path), err)
	}
	if t.Dialect != nil && t.Dialect.FirstLineRewritten && t.end > 0 {
		if c.FirstLine, err = t.firstLineEnd(); err != nil {
			return Cursor{}, err
		}
		if c.FirstLine > 0 {
			if c.BodySHA256, c.BodyTailSHA256, err = bodyHashes(t.ra, c.FirstLine, t.end); err != nil {
				return Cursor{}, fmt.Errorf("hash %s: %w", displayPath(t.Path), err)
			}
		}
	}
	if t.Dialect != nil && t.Dialect.IDField != "" {
		r := NewReverseReader(t.ra, t.end)
		for i := 0; i < lastEventScan; i++ {
			if err := ctx.Err(); err != nil {
				return Cursor{}, err
			}
			l, err := r.Prev()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return Cursor{}, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
			}
			if ev := t.Dialect.Classify(l.Data); ev.ID != "" {
				c.LastEventID = ev.ID
				break
			}
		}
	}
	if opts.CountLines {
		n, err := countNewlines(ctx, t.ra, t.end)
		if err != nil {
			return Cursor{}, fmt.Errorf("count lines of %s: %w", displayPath(t.Path), err)
		}
		c.Lines = &n
	}
	return c, nil
}

// windowHashes hashes the first and the last min(HashWindow, end) bytes of [0, end).
func windowHashes(ra io.ReaderAt, end int64) (prefix, tail string, err error) {
	n := min(end, HashWindow)
	buf := make([]byte, n)
	if _, err := ra.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return "", "", err
	}
	p := sha256.Sum256(buf)
	if _, err := ra.ReadAt(buf, end-n); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return "", "", err
	}
	s := sha256.Sum256(buf)
	return hex.EncodeToString(p[:]), hex.EncodeToString(s[:]), nil
}

func countNewlines(ctx context.Context, ra io.ReaderAt, end int64) (int64, error) {
	buf := make([]byte, 1<<20)
	var n, off int64
	for off < end {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		b := buf[:min(int64(len(buf)), end-off)]
		if _, err := ra.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for _, c := range b {
			if c == '\n' {
				n++
			}
		}
		off += int64(len(b))
	}
	return n, nil
}

// ParseCursor reads a cursor from its JSON form (unknown fields, such as "type", are ignored)
// and checks it.
func ParseCursor(data []byte) (Cursor, error) {
	var c Cursor
	if err := json.Unmarshal(data, &c); err != nil {
		return Cursor{}, fmt.Errorf("parse cursor: %w", err)
	}
	if c.ByteOffsetEnd < 0 {
		return Cursor{}, fmt.Errorf("cursor byte_offset_end %d is negative", c.ByteOffsetEnd)
	}
	for name, h := range map[string]string{"prefix_sha256": c.PrefixSHA256, "tail_sha256": c.TailSHA256} {
		if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
			return Cursor{}, fmt.Errorf("cursor %s %q is not a hex SHA-256", name, h)
		}
	}
	return c, nil
}

// Verification is whether a transcript still extends a cursor's bytes.
type Verification struct {
	Extends bool `json:"extends"`
	// Reason is one of: unchanged (same complete data), appended (bytes were added after the
	// cursor), missing (the file is gone), shorter (the file is shorter than the cursor),
	// not_line_boundary (the byte before the cursor is no longer a newline), prefix_differs,
	// tail_differs.
	Reason string `json:"reason"`
}

// Verify tells whether the transcript's first c.ByteOffsetEnd bytes are still the ones the
// cursor was taken on (as far as the two 64 KiB hashes and the newline at the cursor tell). It
// reads at most 128 KiB plus one byte.
func (t *Transcript) Verify(c Cursor) (Verification, error) {
	switch {
	case !t.exists && c.ByteOffsetEnd > 0:
		return Verification{Reason: "missing"}, nil
	case t.size < c.ByteOffsetEnd:
		return Verification{Reason: "shorter"}, nil
	}
	if c.ByteOffsetEnd > 0 {
		b := make([]byte, 1)
		if _, err := t.ra.ReadAt(b, c.ByteOffsetEnd-1); err != nil {
			return Verification{}, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		if b[0] != '\n' {
			return Verification{Reason: "not_line_boundary"}, nil
		}
	}
	p, s, err := windowHashes(t.ra, c.ByteOffsetEnd)
	if err != nil {
		return Verification{}, fmt.Errorf("hash %s: %w", displayPath(t.Path), err)
	}
	switch {
	case p != c.PrefixSHA256:
		return Verification{Reason: "prefix_differs"}, nil
	case s != c.TailSHA256:
		return Verification{Reason: "tail_differs"}, nil
	case t.end == c.ByteOffsetEnd:
		return Verification{Extends: true, Reason: "unchanged"}, nil
	}
	return Verification{Extends: true, Reason: "appended"}, nil
}

// firstLineEnd is the end of the first line (just past its newline), 0 when there is no whole
// first line within 1 MiB.
func (t *Transcript) firstLineEnd() (int64, error) {
	buf := make([]byte, min(t.end, 1<<20))
	if _, err := t.ra.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
	}
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		return int64(i) + 1, nil
	}
	return 0, nil
}

// bodyHashes hashes [first, min(first+HashWindow, end)) and [max(first, end-HashWindow), end):
// the cursor's windows without the first line.
func bodyHashes(ra io.ReaderAt, first, end int64) (head, tail string, err error) {
	sum := func(from, to int64) (string, error) {
		buf := make([]byte, max(to-from, 0))
		if _, err := ra.ReadAt(buf, from); err != nil && !(errors.Is(err, io.EOF) && len(buf) == 0) {
			return "", err
		}
		h := sha256.Sum256(buf)
		return hex.EncodeToString(h[:]), nil
	}
	if head, err = sum(first, min(first+HashWindow, end)); err != nil {
		return "", "", err
	}
	tail, err = sum(max(first, end-HashWindow), end)
	return head, tail, err
}

// Locate is where the cursor's data ends in the transcript now: ByteOffsetEnd when the file
// still extends the cursor's bytes (Verify), or — for an agent that rewrites its first line —
// ByteOffsetEnd moved by the change in the first line's length, when everything after that
// line still is the same. ok is false when the cursor's bytes are not in the file.
func (t *Transcript) Locate(c Cursor) (offset int64, ok bool, err error) {
	v, err := t.Verify(c)
	if err != nil || v.Extends {
		return c.ByteOffsetEnd, v.Extends, err
	}
	if c.FirstLine <= 0 || c.BodySHA256 == "" || !t.exists {
		return 0, false, nil
	}
	first, err := t.firstLineEnd()
	if err != nil || first == 0 {
		return 0, false, err
	}
	end := c.ByteOffsetEnd - c.FirstLine + first
	if end < first || end > t.end {
		return 0, false, nil
	}
	b := make([]byte, 1)
	if _, err := t.ra.ReadAt(b, end-1); err != nil {
		return 0, false, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
	}
	if b[0] != '\n' {
		return 0, false, nil
	}
	head, tail, err := bodyHashes(t.ra, first, end)
	if err != nil {
		return 0, false, fmt.Errorf("hash %s: %w", displayPath(t.Path), err)
	}
	if head != c.BodySHA256 || tail != c.BodyTailSHA256 {
		return 0, false, nil
	}
	return end, true, nil
}
