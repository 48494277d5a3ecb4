package store

import (
	"fmt"
	"strings"
	"time"

	"rewind.dev/internal/layout"
)

// History is restore-history.json: every restore, newest last.
type History struct {
	Version int            `json:"version"`
	Entries []HistoryEntry `json:"entries"`
}

// RestoreKind is what a restore-history entry did.
type RestoreKind string

const (
	KindRestore     RestoreKind = "restore"      // rewind restore
	KindUndo        RestoreKind = "undo"         // rewind undo
	KindBack        RestoreKind = "back"         // rewind back
	KindUndoRestore RestoreKind = "undo-restore" // reverted the newest entry not undone
	KindRedo        RestoreKind = "redo"         // reverted the newest undo-restore not redone
	KindRevert      RestoreKind = "revert"       // rewind revert: one step's changes taken back
)

// ContextMode is how a restore brings the conversation back.
type ContextMode string

const (
	ContextFork    ContextMode = "fork"     // a new session beside the transcript
	ContextInPlace ContextMode = "in-place" // the live transcript cut back, behind a verified backup
)

// HistoryEntry is one restore (or undo or redo of one). Its ID is its
// backup checkpoint's id (older entries have ids of their own).
type HistoryEntry struct {
	ID               string      `json:"id"`
	At               time.Time   `json:"at"`
	Kind             RestoreKind `json:"kind"`
	Checkpoint       string      `json:"checkpoint,omitempty"` // restored to (code)
	BackupCheckpoint string      `json:"backup_checkpoint"`    // the tree and transcript as they were before
	Code             bool        `json:"code"`
	// Paths are the pathspec items a restore of some paths only was limited
	// to (none: the whole tree).
	Paths   []string    `json:"paths,omitempty"`
	Context ContextMode `json:"context,omitempty"`
	// Fork is what the entry did to a fork: wrote it (or brought it back) at
	// Fork.Path when Fork.Removed is "", moved it from there to Fork.Removed
	// otherwise.
	Fork *ForkRecord `json:"fork,omitempty"`
	// Truncate is the transcript the entry replaced: Truncate.Backup holds
	// the bytes it had before.
	Truncate *TruncateRecord `json:"truncate,omitempty"`
	// UndoOf is the entry an undo-restore or redo reverted; UndoneBy the
	// entry that reverted this one.
	UndoOf   string `json:"undo_of,omitempty"`
	UndoneBy string `json:"undone_by,omitempty"`
	// Done is false from the moment a restore is recorded (before it changes
	// anything) until it has finished: an entry left not done was
	// interrupted, and undo-restore brings back what it may have changed.
	Done bool `json:"done"`
}

// ForkRecord is a fork Rewind wrote: its lineage lets back --both find
// checkpoints of the session it was forked from.
type ForkRecord struct {
	Path             string `json:"path"`
	SessionID        string `json:"session_id"`
	Agent            string `json:"agent,omitempty"`
	ParentTranscript string `json:"parent_transcript"`
	Offset           int64  `json:"offset"` // the fork holds the parent's bytes [0, Offset)
	// ParentFirstLine is the parent's first line (newline included, base64 in
	// JSON) where the fork rewrote it (Droid keeps the session's id and title
	// there): the fork holds the parent's other bytes before Offset, shifted by
	// the two first lines' difference in length.
	ParentFirstLine []byte `json:"parent_first_line,omitempty"`
	// ParentSessionID is the parent's session id where the fork replaced it by SessionID in
	// every line (Gemini): the fork holds the parent's bytes before Offset with the one id
	// for the other, at the same offsets.
	ParentSessionID string `json:"parent_session_id,omitempty"`
	Title           string `json:"title,omitempty"`
	Method          string `json:"method,omitempty"`
	Removed         string `json:"removed_to,omitempty"` // where undo-restore moved it
}

// TruncateRecord is an in-place transcript rewind.
type TruncateRecord struct {
	Path         string `json:"path"`
	Backup       string `json:"backup"`
	Offset       int64  `json:"offset"`
	BytesRemoved int64  `json:"bytes_removed"`
}

func (s *Store) historyPath() string { return s.path("restore-history.json") }

// History reads restore-history.json.
func (s *Store) History() (History, error) {
	var h History
	if err := layout.ReadJSON(s.historyPath(), &h); err != nil {
		return h, fmt.Errorf("restore history: %w", err)
	}
	return h, nil
}

func (s *Store) appendHistory(e HistoryEntry) error {
	h, err := s.History()
	if err != nil {
		return err
	}
	h.Version = Version
	h.Entries = append(h.Entries, e)
	return writeJSON(s.historyPath(), h, layout.FileMode)
}

// UndoReach is how far back gc keeps what undo-restore and redo restore
// from: every backup checkpoint that some run of at most UndoReach
// undo-restores and redos, in any order, would restore from. Older backups
// are checkpoints like any other to gc, though list does not show them
// (see package retention).
const UndoReach = 10

// inReach returns the backup checkpoints that some run of at most n
// undo-restores and redos, in any order, would restore from.
//
// Undo-restore reverts the newest entry not undone that is not an
// undo-restore (undoTarget) and adds an undo-restore; a redo reverts the
// newest undo-restore not undone, when only redos and undone entries lie
// after it (redoTarget), and adds a redo. So the entries undo-restore
// reverts go in order, newest first, one per undo-restore: the newest n
// are in reach. An undo-restore is reached by redos once every entry newer
// than it that is neither a redo nor an undo-restore is undone.
// Undo-restore gets there in k steps, k being the place of the oldest such
// entry among those it reverts (the redos newer than it among them); each
// step adds an undo-restore a redo must revert first, and each of the u
// undo-restores newer than it takes a redo: 2k+u+1 steps in all, and none
// fewer reach it.
func (h *History) inReach(n int) map[string]bool {
	m := map[string]bool{}
	reverts, k, u := 0, 0, 0 // entries undo-restore reverts seen; k as above; undo-restores seen
	for i := len(h.Entries) - 1; i >= 0 && (reverts < n || 2*k+u < n); i-- {
		e := h.Entries[i]
		if e.UndoneBy != "" {
			continue
		}
		if e.Kind == KindUndoRestore {
			if 2*k+u+1 <= n {
				m[e.BackupCheckpoint] = true
			}
			u++
			continue
		}
		reverts++
		if reverts <= n {
			m[e.BackupCheckpoint] = true
		}
		if e.Kind != KindRedo {
			k = reverts
		}
	}
	delete(m, "")
	return m
}

// What says what an entry did, in a few words naming checkpoints by id:
// "restore to 20261122_143052_001", "back, code to …", "undo-restore of …".
func (e *HistoryEntry) What(h *History) string {
	switch e.Kind {
	case KindUndoRestore:
		if u := h.Entry(e.UndoOf); u != nil {
			return "undo-restore of " + u.What(h)
		}
		return "undo-restore"
	case KindRedo:
		// A redo does again what the undo-restore it reverts had undone.
		if u := h.Entry(e.UndoOf); u != nil {
			if a := h.Entry(u.UndoOf); a != nil {
				return a.What(h)
			}
		}
		return "redo"
	case KindRevert:
		return "revert of " + e.Checkpoint
	case KindImport:
		return "import"
	case KindBack:
		if e.Code {
			return "back, code to " + e.Checkpoint
		}
		return "back"
	}
	if len(e.Paths) > 0 {
		return fmt.Sprintf("%s of %s to %s", e.Kind, strings.Join(e.Paths, " "), e.Checkpoint)
	}
	return string(e.Kind) + " to " + e.Checkpoint
}

// Entry is the entry with that id, or nil.
func (h *History) Entry(id string) *HistoryEntry {
	for i := range h.Entries {
		if h.Entries[i].ID == id {
			return &h.Entries[i]
		}
	}
	return nil
}

// Forks lists every fork the history records, newest first, once each: the
// newest record of a fork says where it is (written, moved aside, brought
// back), and entry is the entry that wrote it.
func (h *History) Forks() []ForkState {
	var out []ForkState
	seen := map[string]int{}
	for i := len(h.Entries) - 1; i >= 0; i-- {
		e := &h.Entries[i]
		f := e.Fork
		if f == nil {
			continue
		}
		if j, ok := seen[f.Path]; ok {
			if e.Kind != KindUndoRestore && e.Kind != KindRedo {
				out[j].Entry = e
			}
			continue
		}
		seen[f.Path] = len(out)
		out = append(out, ForkState{ForkRecord: *f, Entry: e, Last: e})
	}
	return out
}

// ForkState is a fork as the history knows it.
type ForkState struct {
	ForkRecord
	Entry *HistoryEntry // the entry that wrote it
	Last  *HistoryEntry // the newest entry that moved it (or wrote it)
}

// forkTitle is the title Rewind gave the fork at path, "" when path is not a
// fork Rewind wrote: a fork of it is titled after it.
func (s *Store) forkTitle(path string) string {
	h, err := s.History()
	if err != nil {
		return ""
	}
	for _, f := range h.Forks() {
		if f.Path == path {
			return f.Title
		}
	}
	return ""
}

// Redoable is the undo-restore a redo would revert, or nil.
func (h *History) Redoable() *HistoryEntry {
	if i := h.redoTarget(); i >= 0 {
		return &h.Entries[i]
	}
	return nil
}
