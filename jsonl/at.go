package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// EventCut is the cut before one event: the event and everything after it are removed.
type EventCut struct {
	Offset        int64 `json:"offset"`         // the event line's start: a fork keeps [0, Offset)
	EventsKept    int64 `json:"events_kept"`    // JSON-object lines before Offset
	EventsRemoved int64 `json:"events_removed"` // JSON-object lines from Offset to the end of the complete data
}

// At finds the complete line whose event id is id, scanning from the end (recent events are
// found fast), and returns the cut before it. Counting the kept events reads [0, Offset). The
// error wraps ErrEventNotFound when no line carries the id, ErrNoEventIDs when the dialect has
// no ids.
func (t *Transcript) At(ctx context.Context, id string) (EventCut, error) {
	if err := t.needDialect(); err != nil {
		return EventCut{}, err
	}
	if id == "" {
		return EventCut{}, fmt.Errorf("the event id is empty")
	}
	if t.Dialect != nil && t.Dialect.IDField == "" {
		return EventCut{}, fmt.Errorf("agent %s: %w", t.Dialect.Name, ErrNoEventIDs)
	}
	needle := []byte(id)
	r := NewReverseReader(t.ra, t.end)
	var removed int64
	for i := 0; ; i++ {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return EventCut{}, err
			}
		}
		l, err := r.Prev()
		if errors.Is(err, io.EOF) {
			return EventCut{}, fmt.Errorf("event %q is not in %s: %w", id, displayPath(t.Path), ErrEventNotFound)
		}
		if err != nil {
			return EventCut{}, fmt.Errorf("read %s: %w", displayPath(t.Path), err)
		}
		c := Clean(l.Data)
		if len(c) == 0 || c[0] != '{' {
			continue
		}
		if bytes.Contains(c, needle) && t.Dialect.Classify(c).ID == id {
			removed++
			kept, err := t.countEvents(ctx, l.Offset)
			if err != nil {
				return EventCut{}, err
			}
			return EventCut{Offset: l.Offset, EventsKept: kept, EventsRemoved: removed}, nil
		}
		if jsonValid(c) {
			removed++
		}
	}
}

// countEvents counts the JSON-object lines in [0, end).
func (t *Transcript) countEvents(ctx context.Context, end int64) (int64, error) {
	var s Stats
	var err error
	i := 0
	rerr := t.Lines(0, func(l Line) bool {
		if l.Offset >= end {
			return false
		}
		if i++; i%256 == 0 {
			if err = ctx.Err(); err != nil {
				return false
			}
		}
		s.count(l.Data)
		return true
	})
	if err != nil {
		return 0, err
	}
	return s.Events, rerr
}

func containsBytes(b, sub []byte) bool { return bytes.Contains(b, sub) }
