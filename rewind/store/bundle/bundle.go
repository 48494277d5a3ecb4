// Package bundle is the export archive, the file 'rewind export' writes and
// 'rewind import' reads: one checkpoint's tree and conversation, with what
// they are, to be carried to another machine. It is the format's one owner:
// its names, export.json (Info), writing an archive (Writer) and reading one
// back with every check made before anything is written (Open). It builds
// on package record, the checkpoint's metadata the archive carries, and
// knows nothing of a store.
//
// An archive is a plain, uncompressed tar whose members lie in one folder,
// rewind-export-<checkpoint id>/:
//
//	checkpoint.json      the checkpoint's metadata, as its metadata.json
//	transcript.jsonl.gz  the transcript up to the checkpoint's cursor (when it has one)
//	tree.tar.gz          the whole tree at the checkpoint, a full snapshot as rewind-snap writes
//	export.json          what the archive is (format, version, agent, source folder), and the
//	                     size and SHA-256 of every other member; last, since it holds their hashes
package bundle

import (
	"fmt"
	"os"
	"slices"
	"time"

	"rewind.dev/rewind/store/record"
)

// Names of an archive's members.
const (
	ManifestName   = "export.json"
	CheckpointName = "checkpoint.json"
	TranscriptName = "transcript.jsonl.gz"
	TreeName       = "tree.tar.gz"
)

// Format is export.json's type; Version the version this Rewind writes and
// the newest it reads. Version 2 names checkpoint.json's has_transcript so
// (version 1 wrote hasTranscript, still read): an earlier Rewind, which
// reads version 1 only, says a newer one wrote the archive rather than that
// a key is unknown.
const (
	Format  = "rewind-export"
	Version = 2
)

// names are the names an archive may hold, in the order they are written.
var names = []string{CheckpointName, TranscriptName, TreeName, ManifestName}

// MemberNames are the names an archive may hold, in the order they are written.
func MemberNames() []string { return slices.Clone(names) }

// topPrefix starts the name of an archive's one folder; the checkpoint's id ends it.
const topPrefix = "rewind-export-"

// Top is the name of the folder the members of checkpoint id's archive lie in.
func Top(id string) string { return topPrefix + id }

// Info is export.json.
type Info struct {
	Type          string    `json:"type"` // Format
	Version       int       `json:"version"`
	CreatedAt     time.Time `json:"created_at"`
	RewindVersion string    `json:"rewind_version,omitempty"`
	Agent         string    `json:"agent,omitempty"`
	AgentVersion  string    `json:"agent_version,omitempty"`
	// SourceFolder is the project the checkpoint was taken in; SessionID
	// and Transcript the session its conversation is.
	SourceFolder string `json:"source_folder"`
	SessionID    string `json:"session_id,omitempty"`
	Transcript   string `json:"transcript,omitempty"`
	// Checkpoint names the checkpoint; its whole metadata is checkpoint.json.
	Checkpoint  string    `json:"checkpoint"`
	TakenAt     time.Time `json:"taken_at"`
	Description string    `json:"description,omitempty"`
	Prompt      string    `json:"prompt,omitempty"` // the prompt it was taken at, if any
	TreeHash    string    `json:"tree_hash"`        // of the checkpoint's whole tree (before redaction)
	Files       int       `json:"files"`            // files in tree.tar.gz
	// TranscriptBytes is the length of the conversation (inflated), and
	// PrefixSHA256 and TailSHA256 its cursor's hashes, checked on import.
	TranscriptBytes int64  `json:"transcript_bytes,omitempty"`
	PrefixSHA256    string `json:"prefix_sha256,omitempty"`
	TailSHA256      string `json:"tail_sha256,omitempty"`
	// Redacted are the paths left out by --redact; Masked the files whose
	// secrets it masked (same length), TranscriptMasked how many secrets
	// it masked in the transcript (which keeps its length: PrefixSHA256
	// and TailSHA256 are the masked bytes', not checkpoint.json's), and
	// MaskedFields the fields of checkpoint.json and this file it masked.
	Redacted         []string     `json:"redacted,omitempty"`
	Masked           []MaskedFile `json:"masked,omitempty"`
	TranscriptMasked int          `json:"transcript_masked,omitempty"`
	MaskedFields     []string     `json:"masked_fields,omitempty"`
	Members          []Member     `json:"members"`
}

// Member is one member of the archive other than export.json.
type Member struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// MaskedFile is a file of the tree whose secrets --redact masked.
type MaskedFile struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

// maskableFields are the fields of checkpoint.json (and export.json) in
// which an export may mask a secret.
var maskableFields = []string{"description", "prompt", "last_prompt"}

// Error is an export archive that is refused; nothing was written.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("export archive %s: %s; nothing was written", e.Path, e.Reason)
}

// Bounds on what an archive may hold, so that one cannot fill the disk or
// memory before its checks fail: the small members are read into memory.
const (
	smallLimit = 16 << 20 // export.json, checkpoint.json
	treeLimit  = 1 << 40  // tree.tar.gz (its entries are bounded by snap's limits)
	textLimit  = 64 << 30 // transcript.jsonl.gz, and the transcript inflated
	fieldLimit = 4096     // a path or other text of export.json
)

// Archive is an export archive read back and checked (see Open): its
// members other than the small ones are copied out to Dir (a temporary
// folder the caller removes with Close).
type Archive struct {
	Path       string
	SHA256     string // of the whole archive, as sha256sum prints it
	Info       Info
	Checkpoint record.Metadata
	Dir        string
	Tree       string // Dir's copy of tree.tar.gz
	Transcript string // Dir's copy of transcript.jsonl.gz; "" when there is none
}

// Close removes the copies.
func (a *Archive) Close() { os.RemoveAll(a.Dir) }
