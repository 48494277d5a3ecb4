package fork

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"rewind.dev/jsonl"
)

// Checkpoint is where to cut a transcript and what its bytes before the cut were: the boundary
// printed by `rewind-jsonl back` (offset only), or a checkpoint's cursor printed by
// `rewind-jsonl cursor` (offset plus the hashes that tell whether the file still holds the same
// bytes).
type Checkpoint struct {
	// Offset is the cut: a fork keeps bytes [0, Offset).
	Offset int64
	// PrefixSHA256 and TailSHA256 are hex SHA-256 of the first and the last min(64 KiB, Offset)
	// bytes before Offset, as in a jsonl.Cursor; empty when not known.
	PrefixSHA256 string
	TailSHA256   string
	// Inode, when not zero, is the inode the transcript had at checkpoint time (truncate).
	Inode uint64
	// Agent is the transcript's dialect when the input named it.
	Agent string
	// Leaf (tree dialects: pi) is the line the fork's conversation ends at, the parent of the
	// prompt cut before; empty for the last line before Offset.
	Leaf string
}

// ParseCheckpoint reads the JSON that `rewind-jsonl back` ({"type":"boundary","offset":…}),
// `rewind-jsonl at` ({"offset":…}) or `rewind-jsonl cursor` ({"type":"cursor",
// "byte_offset_end":…,"prefix_sha256":…,"tail_sha256":…}) prints. Unknown fields are ignored;
// an optional "inode" is taken.
func ParseCheckpoint(data []byte) (Checkpoint, error) {
	// The lines jsonl's types define, read as one: an offset (a boundary) or a cursor, which
	// the keys present tell apart.
	var in struct {
		jsonl.CursorLine
		Offset   int64  `json:"offset"`
		ParentID string `json:"parent_id"`
		Inode    uint64 `json:"inode"`
	}
	var keys map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&keys); err != nil {
		if errors.Is(err, io.EOF) {
			return Checkpoint{}, errors.New("no boundary or cursor JSON on stdin")
		}
		return Checkpoint{}, fmt.Errorf("boundary or cursor JSON on stdin: %w", err)
	}
	if dec.More() {
		return Checkpoint{}, errors.New("stdin holds more than one JSON value; pass one boundary or cursor")
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return Checkpoint{}, fmt.Errorf("boundary or cursor JSON on stdin: %w", err)
	}
	_, hasOffset := keys["offset"]
	_, hasEnd := keys["byte_offset_end"]
	c := Checkpoint{PrefixSHA256: in.PrefixSHA256, TailSHA256: in.TailSHA256, Inode: in.Inode, Agent: in.Agent, Leaf: in.ParentID}
	switch {
	case in.Type == "cursor" || !hasOffset && hasEnd:
		if !hasEnd {
			return Checkpoint{}, errors.New("cursor on stdin has no byte_offset_end")
		}
		c.Offset = in.ByteOffsetEnd
	case hasOffset:
		c.Offset = in.Offset
	default:
		return Checkpoint{}, fmt.Errorf("JSON on stdin (type %q) has neither offset nor byte_offset_end", in.Type)
	}
	return c, c.validate()
}

func (c Checkpoint) validate() error {
	if c.Offset < 0 {
		return fmt.Errorf("offset %d is negative", c.Offset)
	}
	for name, h := range map[string]string{"prefix_sha256": c.PrefixSHA256, "tail_sha256": c.TailSHA256} {
		if h == "" {
			continue
		}
		if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("%s %q is not a hex SHA-256", name, h)
		}
	}
	return nil
}

// mismatch tells why the first c.Offset bytes of ra (size bytes long) are not the checkpointed
// prefix, or "" when they are as far as can be told: the file is long enough, the cut is at a
// line boundary, and the hashes the checkpoint carries match. The reasons are those of
// jsonl.Verification.
func (c Checkpoint) mismatch(ra io.ReaderAt, size int64) (string, error) {
	if size < c.Offset {
		return "shorter", nil
	}
	if c.Offset > 0 {
		b := make([]byte, 1)
		if _, err := ra.ReadAt(b, c.Offset-1); err != nil {
			return "", err
		}
		// A cut that is not after a newline is only allowed at the very end of the data (a
		// last line the agent has not terminated yet, which the fork terminates); a cut inside
		// a line would leave half a JSON object.
		if b[0] != '\n' && !(c.Offset == size && lastLineIsJSON(ra, size)) {
			return "not_line_boundary", nil
		}
	}
	if c.PrefixSHA256 == "" && c.TailSHA256 == "" {
		return "", nil
	}
	n := min(c.Offset, jsonl.HashWindow)
	buf := make([]byte, n)
	if c.PrefixSHA256 != "" {
		if _, err := ra.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
			return "", err
		}
		if sum := sha256.Sum256(buf); hex.EncodeToString(sum[:]) != c.PrefixSHA256 {
			return "prefix_differs", nil
		}
	}
	if c.TailSHA256 != "" {
		if _, err := ra.ReadAt(buf, c.Offset-n); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
			return "", err
		}
		if sum := sha256.Sum256(buf); hex.EncodeToString(sum[:]) != c.TailSHA256 {
			return "tail_differs", nil
		}
	}
	return "", nil
}

// lastLineIsJSON reports whether the bytes after the last newline before size form a JSON
// value: a complete event whose newline the writer has not written yet.
func lastLineIsJSON(ra io.ReaderAt, size int64) bool {
	end, err := jsonl.LastNewline(ra, size)
	if err != nil || size-end > 256<<20 {
		return false
	}
	buf := make([]byte, size-end)
	if _, err := ra.ReadAt(buf, end); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	c := jsonl.Clean(buf)
	return len(c) > 0 && c[0] == '{' && json.Valid(c)
}

// reasonText says a mismatch reason in words, for errors.
func reasonText(reason string) string {
	switch reason {
	case "shorter":
		return "it is shorter than the offset"
	case "not_line_boundary":
		return "the offset is not at the end of a line"
	case "prefix_differs":
		return "its first bytes differ (prefix hash)"
	case "tail_differs":
		return "its bytes before the offset differ (tail hash)"
	case "missing":
		return "it does not exist"
	}
	return reason
}
