package store

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"rewind.dev/jsonl"
)

// maxParentSessions bounds how far checkpointInParentSessions follows forks of forks.
const maxParentSessions = 32

// checkpointInParentSessions looks for the checkpoint before turn in the sessions the agent
// itself forked t from (pi's /fork and --fork copy the lines of the path with their ids, under
// a header naming the parent file): a checkpoint of a parent session is before the prompt when
// the last line it saw is on the fork's path at or above the prompt's parent. The fork's bytes
// differ from the parent's (left branches are dropped), so ids, not offsets, decide.
func (s *Store) checkpointInParentSessions(ctx context.Context, t *jsonl.Transcript, turn jsonl.Turn, cps []*Checkpoint) (*Checkpoint, error) {
	if t.Dialect == nil || t.Dialect.Tree == nil || turn.ParentID == "" {
		return nil, nil
	}
	parents := map[string]bool{}
	for cur := t; len(parents) < maxParentSessions; {
		p, err := cur.ParentSession()
		if err != nil || p == "" || parents[p] || p == t.Path {
			break
		}
		parents[p] = true
		next, err := jsonl.Open(p, t.Dialect)
		if err != nil {
			break // the parent session is gone: its checkpoints can still match by id
		}
		defer next.Close()
		cur = next
	}
	if len(parents) == 0 {
		return nil, nil
	}
	onPath, err := t.PathIDs(ctx, turn.ParentID)
	if err != nil {
		return nil, err
	}
	for _, c := range cps { // newest first
		if c.Transcript == nil || c.Backup() || !parents[c.Transcript.OriginalPath] {
			continue
		}
		if id := c.Transcript.Cursor.LastEventID; id != "" && onPath[id] {
			return c, nil
		}
	}
	return nil, nil
}

// ancestor is what the current transcript holds of a transcript in its
// lineage (itself included).
type ancestor struct {
	limit int64  // where the shared bytes end, in the ancestor's own offsets
	first []byte // the ancestor's first line where a fork on the way rewrote it, else nil
	// held is the current transcript with first in place of its own first
	// line: the ancestor's bytes as far as they are shared.
	held *jsonl.Transcript
}

// lineageOf follows the forks Rewind made from path back to the sessions they
// came from and returns, for path and each of them, what t (path's transcript)
// holds of it.
func lineageOf(t *jsonl.Transcript, path string, promptOffset int64, h History) (map[string]ancestor, error) {
	forkOf := map[string]*ForkRecord{}
	for i := range h.Entries {
		if f := h.Entries[i].Fork; f != nil {
			forkOf[f.Path] = f // the newest record of a path wins
		}
	}
	var firstSize int64 = -1 // t's first line, read only when a fork rewrote one
	lineage := map[string]ancestor{path: {limit: promptOffset, held: t}}
	for cur := path; ; {
		f := forkOf[cur]
		if f == nil {
			break
		}
		if _, seen := lineage[f.ParentTranscript]; seen {
			break
		}
		child := lineage[cur]
		parent := ancestor{first: child.first, held: child.held}
		if f.ParentSessionID != "" && len(f.ParentSessionID) == len(f.SessionID) {
			// Gemini: the fork named its session in every line; the parent's bytes are the
			// fork's with the parent's id put back, at the same offsets.
			held, err := jsonl.New(t.Path, swappedID{rest: child.held.ReaderAt(), from: []byte(f.SessionID), to: []byte(f.ParentSessionID)},
				child.held.Size(), t.Dialect)
			if err != nil {
				return nil, err
			}
			parent.held, parent.limit = held, min(child.limit, f.Offset)
			lineage[f.ParentTranscript] = parent
			cur = f.ParentTranscript
			continue
		}
		if f.ParentFirstLine != nil {
			parent.first = f.ParentFirstLine
			if firstSize < 0 {
				var err error
				if firstSize, err = firstLineSize(t); err != nil {
					return nil, err
				}
			}
			held, err := jsonl.New(t.Path, replacedFirstLine{first: parent.first, rest: t.ReaderAt(), skip: firstSize},
				int64(len(parent.first))+max(t.Size()-firstSize, 0), t.Dialect)
			if err != nil {
				return nil, err
			}
			parent.held = held
		}
		// The child's limit in the parent's offsets: the bytes after the
		// first line are shared, so the offsets differ by the first lines'.
		limit := child.limit - lineSize(child.first, firstSize) + lineSize(parent.first, firstSize)
		parent.limit = min(limit, f.Offset)
		lineage[f.ParentTranscript] = parent
		cur = f.ParentTranscript
	}
	return lineage, nil
}

// lineSize is the length of first, or of the current transcript's own first
// line (current) where first is nil.
func lineSize(first []byte, current int64) int64 {
	if first == nil {
		return current
	}
	return int64(len(first))
}

// firstLineSize is the length of t's first line, newline included.
func firstLineSize(t *jsonl.Transcript) (int64, error) {
	var size int64
	err := t.Lines(0, func(l jsonl.Line) bool {
		size = l.End
		return false
	})
	if err != nil {
		return 0, fmt.Errorf("transcript %s: %w", t.Path, err)
	}
	return size, nil
}

// swappedID reads as rest with every occurrence of from replaced by to, of the same length.
type swappedID struct {
	rest     io.ReaderAt
	from, to []byte
}

func (r swappedID) ReadAt(p []byte, off int64) (int, error) {
	// Read len(from)-1 bytes more on each side, so that an occurrence cut by the window's
	// edges is seen whole.
	pad := int64(len(r.from) - 1)
	start := max(off-pad, 0)
	buf := make([]byte, int64(len(p))+(off-start)+pad)
	n, err := r.rest.ReadAt(buf, start)
	buf = bytes.ReplaceAll(buf[:n], r.from, r.to)
	if int64(len(buf)) <= off-start {
		if err == nil {
			err = io.EOF
		}
		return 0, err
	}
	m := copy(p, buf[off-start:])
	if m == len(p) {
		return m, nil
	}
	if err == nil {
		err = io.EOF
	}
	return m, err
}

// replacedFirstLine reads as first followed by rest from skip on.
type replacedFirstLine struct {
	first []byte
	rest  io.ReaderAt
	skip  int64
}

func (r replacedFirstLine) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < int64(len(r.first)) {
		n = copy(p, r.first[off:])
		if n == len(p) {
			return n, nil
		}
		off = int64(len(r.first))
	}
	m, err := r.rest.ReadAt(p[n:], off-int64(len(r.first))+r.skip)
	return n + m, err
}
