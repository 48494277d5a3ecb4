package jsonl

// The JSON the plumbing tools pass each other — what rewind-jsonl prints and rewind-fork reads
// on its stdin — has one owner: these types. rewind-fork decodes the lines below with them.

// CursorLine is what `rewind-jsonl cursor` prints: {"type":"cursor", …the Cursor}.
type CursorLine struct {
	Type string `json:"type"` // "cursor"
	Cursor
}

// BoundaryLine is what `rewind-jsonl back` prints: where a cut before a prompt goes.
type BoundaryLine struct {
	Type         string `json:"type"` // "boundary"
	Offset       int64  `json:"offset"`
	PromptOffset int64  `json:"prompt_offset"`
	// ParentID (tree dialects) is the line a fork before the prompt must end at.
	ParentID string `json:"parent_id,omitempty"`
	Turn     Turn   `json:"turn"`
}

// EventCutLine is what `rewind-jsonl at` prints: the cut before an event.
type EventCutLine struct {
	Type string `json:"type"` // "boundary"
	EventCut
}
