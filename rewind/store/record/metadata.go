// Package record is what a checkpoint is on record, apart from the store
// that keeps it: its metadata.json (Metadata, with its checksum), the form
// of its id, its folder's files (Checkpoint), and the check of its
// transcript's bytes, the chain of files that hold them, against the
// cursor the metadata holds. An export archive carries the same record,
// so both the store and the bundle package, which reads and writes those
// archives, build on this one; it knows nothing of either.
package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"rewind.dev/jsonl"
)

// Metadata is a checkpoint's metadata.json, written last: a folder without
// valid metadata is not a checkpoint.
type Metadata struct {
	Version     int       `json:"version"`
	ID          string    `json:"id"`
	CreatedAt   time.Time `json:"created_at"`
	Description string    `json:"description,omitempty"`
	Trigger     Trigger   `json:"trigger"`
	Pinned      string    `json:"pinned,omitempty"` // the label; "" when not pinned
	Snapshot    Snapshot  `json:"snapshot"`
	// Changes counts what changed since the previous checkpoint.
	Changes Changes `json:"changes"`
	// HasTranscript: the checkpoint holds the conversation (Transcript's
	// Snapshot). Written before every key was snake_case as
	// "hasTranscript", which Decode still reads.
	HasTranscript bool        `json:"has_transcript"`
	Transcript    *Transcript `json:"transcript,omitempty"`
	// Sum is the hex SHA-256 of the file without it (see Encode):
	// a damaged metadata.json is never taken for a checkpoint.
	Sum string `json:"sum,omitempty"`
}

// sumField opens the last field of metadata.json, its checksum.
const sumField = ",\n  \"sum\": \""

// Encode is metadata.json: md as indented JSON whose last field,
// sum, is the SHA-256 of the same text without that field — so that any
// damage to the file is seen, while a reader still takes the fields it does
// not know. md.Sum is set to it: md is then what the file says.
func Encode(md *Metadata) ([]byte, error) {
	md.Sum = ""
	b, err := json.MarshalIndent(md, "", "  ")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	md.Sum = hex.EncodeToString(sum[:])
	b = b[:len(b)-2] // "\n}"
	return fmt.Appendf(b, "%s%s\"\n}\n", sumField, md.Sum), nil
}

// CheckSum verifies the checksum Encode wrote; a file
// without one (written before checksums were) passes.
func CheckSum(raw []byte) error {
	i := bytes.LastIndex(raw, []byte(sumField))
	if i < 0 {
		return nil
	}
	want := string(bytes.TrimRight(raw[i+len(sumField):], "\"}\n"))
	body := append(raw[:i:i], "\n}"...)
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != want {
		return errors.New("metadata.json is damaged: its checksum differs")
	}
	return nil
}

// metadataJSON is metadata.json as it is read: Metadata, and the names of
// its keys that earlier versions wrote, which the stores and archives they
// made still hold.
type metadataJSON struct {
	Metadata
	OldHasTranscript *bool `json:"hasTranscript,omitempty"`
}

// Decode reads metadata.json (or an archive's checkpoint.json),
// whose checksum the caller verified (CheckSum, over the bytes as
// they are: an earlier version's file verifies as it was written): with
// strict, a key it does not know is refused (see DecodeStrict); an earlier
// version's name of a key is read as the key. What it returns encodes
// (Encode) with today's names only.
func Decode(raw []byte, strict bool) (Metadata, error) {
	var v metadataJSON
	var err error
	if strict {
		err = DecodeStrict(raw, &v)
	} else {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil {
		return Metadata{}, err
	}
	if v.OldHasTranscript != nil && *v.OldHasTranscript {
		v.HasTranscript = true
	}
	return v.Metadata, nil
}

// TriggerKind is what took a checkpoint.
type TriggerKind string

// Trigger is what took the checkpoint.
type Trigger struct {
	Kind  TriggerKind `json:"kind"`
	Event string      `json:"event,omitempty"` // canonical hook event, e.g. UserPromptSubmit
	Tool  string      `json:"tool,omitempty"`
	File  string      `json:"file,omitempty"`
	Agent string      `json:"agent,omitempty"`
	// Prompt is the start of the prompt about to run (UserPromptSubmit).
	Prompt string `json:"prompt,omitempty"`
}

// Snapshot holds the tree snapshot's figures.
type Snapshot struct {
	Files           int    `json:"files"`
	Dirs            int    `json:"dirs"`
	Symlinks        int    `json:"symlinks"`
	Bytes           int64  `json:"bytes"`
	CompressedBytes int64  `json:"compressed_bytes"`
	TreeHash        string `json:"tree_hash"`
	// ReusedFrom names the checkpoint whose tree this one equals (its
	// layer is empty, or with a full snapshot, it shares the archive).
	ReusedFrom string `json:"reused_from,omitempty"`
	// Layer is true when the archive holds only what changed since the
	// previous checkpoint; Depth counts layers since the last full snapshot;
	// LayerFiles is how many files' content the archive holds.
	Layer      bool `json:"layer"`
	Depth      int  `json:"depth"`
	LayerFiles int  `json:"layer_files"`
	// Unreadable lists what the save could not read (no permission, an I/O
	// error): not in the snapshot, and left alone by its restores.
	Unreadable []string `json:"unreadable,omitempty"`
	// FullBecause says why the snapshot is full where it would have been a
	// layer: the chain it would have built on is damaged.
	FullBecause string `json:"full_because,omitempty"`
}

// Changes counts the difference from the previous checkpoint's tree.
type Changes struct {
	Since    string `json:"since,omitempty"`
	Added    int    `json:"added"`
	Modified int    `json:"modified"`
	Deleted  int    `json:"deleted"`
}

// Transcript is the agent transcript at checkpoint time.
type Transcript struct {
	Agent        string `json:"agent,omitempty"`
	OriginalPath string `json:"original_path"`
	SessionID    string `json:"session_id,omitempty"`
	// Snapshot is the file holding the transcript's bytes [BaseOffset,
	// Cursor.ByteOffsetEnd) as gzip ("" when nothing was captured); the
	// bytes before BaseOffset are in checkpoint Base's chain.
	Snapshot   string `json:"snapshot,omitempty"`
	Base       string `json:"base,omitempty"`
	BaseOffset int64  `json:"base_offset"`
	// Chain is how many files hold the bytes (Snapshot's and Base's chain),
	// so the next capture need not walk them to know; 0 in checkpoints made
	// before it was recorded. gc merging an older link can leave it an
	// overestimate, which only brings the next whole capture sooner.
	Chain      int          `json:"chain,omitempty"`
	Cursor     jsonl.Cursor `json:"cursor"`
	LastPrompt string       `json:"last_prompt,omitempty"` // preview of the prompt the checkpoint sits after
	// Named: the user named this transcript (rewind save --transcript), and it
	// lies outside its agent's session folders. A transcript a hook or
	// session.json named never does (jsonl.CheckTranscriptPath), and a
	// restore cuts one that is not Named only inside them.
	Named bool `json:"named,omitempty"`
	// Problem says why the transcript is not in the checkpoint, when a hook
	// (or a restore's backup) could not read it: the tree was taken all the
	// same.
	Problem string `json:"problem,omitempty"`
}

// DecodeStrict decodes the one JSON value data holds into v, refusing a
// field v does not have: an archive's JSON says exactly what this Rewind
// reads.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more than one JSON value")
	}
	return nil
}
