package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
)

// Files inside a checkpoint folder.
const (
	SnapshotFile   = "snapshot.tar.gz"
	ManifestFile   = "manifest"
	TranscriptFile = "transcript.jsonl.gz"
	MetadataFile   = "metadata.json"
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
	// "hasTranscript", which decodeMetadata still reads.
	HasTranscript bool        `json:"has_transcript"`
	Transcript    *Transcript `json:"transcript,omitempty"`
	// Sum is the hex SHA-256 of the file without it (see encodeMetadata):
	// a damaged metadata.json is never taken for a checkpoint.
	Sum string `json:"sum,omitempty"`
}

// sumField opens the last field of metadata.json, its checksum.
const sumField = ",\n  \"sum\": \""

// encodeMetadata is metadata.json: md as indented JSON whose last field,
// sum, is the SHA-256 of the same text without that field — so that any
// damage to the file is seen, while a reader still takes the fields it does
// not know. md.Sum is set to it: md is then what the file says.
func encodeMetadata(md *Metadata) ([]byte, error) {
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

// checkMetadataSum verifies the checksum encodeMetadata wrote; a file
// without one (written before checksums were) passes.
func checkMetadataSum(raw []byte) error {
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

// decodeMetadata reads metadata.json (or an archive's checkpoint.json),
// whose checksum the caller verified (checkMetadataSum, over the bytes as
// they are: an earlier version's file verifies as it was written): with
// strict, a key it does not know is refused (see decodeStrict); an earlier
// version's name of a key is read as the key. What it returns encodes
// (encodeMetadata) with today's names only.
func decodeMetadata(raw []byte, strict bool) (Metadata, error) {
	var v metadataJSON
	var err error
	if strict {
		err = decodeStrict(raw, &v)
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

// writeMetadata replaces a checkpoint's metadata.json atomically (md.Sum
// set to its checksum).
func writeMetadata(dir string, md *Metadata) error {
	b, err := encodeMetadata(md)
	if err != nil {
		return err
	}
	return durable.WriteFile(filepath.Join(dir, MetadataFile), b, layout.FileMode)
}

// TriggerKind is what took a checkpoint.
type TriggerKind string

const (
	TriggerManual     TriggerKind = "manual"      // rewind save
	TriggerHook       TriggerKind = "hook"        // an agent's hook event (Event says which)
	TriggerPreRestore TriggerKind = "pre-restore" // the backup a restore takes first
)

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

// Checkpoint is one checkpoint of the store.
type Checkpoint struct {
	Metadata
	Dir string `json:"-"`
}

// SnapshotPath is the checkpoint's archive.
func (c *Checkpoint) SnapshotPath() string { return filepath.Join(c.Dir, SnapshotFile) }

// ManifestPath is the checkpoint's manifest.
func (c *Checkpoint) ManifestPath() string { return filepath.Join(c.Dir, ManifestFile) }

// Backup reports whether c is the backup a restore took first. Backups are
// not counted by @N and list shows them only when asked (--all): they are
// reached by id.
func (c *Checkpoint) Backup() bool { return c.Trigger.Kind == TriggerPreRestore }

// IDs lists the checkpoint ids, oldest first, without reading metadata.
func (s *Store) IDs() ([]string, error) {
	des, err := os.ReadDir(s.checkpointsDir())
	if err != nil {
		return nil, fmt.Errorf("read checkpoints of %s: %w", s.Dir, err)
	}
	var ids []string
	for _, de := range des {
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") {
			ids = append(ids, de.Name())
		}
	}
	slices.SortFunc(ids, CompareIDs)
	return ids, nil
}

// List returns every valid checkpoint, newest first. Folders without valid
// metadata (a crash mid-write cannot leave one, but a hand edit can) are
// returned in bad.
func (s *Store) List() (cps []*Checkpoint, bad []string, err error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, nil, err
	}
	for i := len(ids) - 1; i >= 0; i-- {
		c, err := s.Load(ids[i])
		if err != nil {
			bad = append(bad, ids[i])
			continue
		}
		cps = append(cps, c)
	}
	return cps, bad, nil
}

// Load reads one checkpoint's metadata.
func (s *Store) Load(id string) (*Checkpoint, error) {
	dir := s.checkpointDir(id)
	b, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	c := &Checkpoint{Dir: dir}
	if err := checkMetadataSum(b); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	if c.Metadata, err = decodeMetadata(b, false); err != nil {
		return nil, fmt.Errorf("checkpoint %s: metadata.json: %w", id, err)
	}
	if c.ID != id {
		return nil, fmt.Errorf("checkpoint %s: metadata.json names %q", id, c.ID)
	}
	return c, nil
}

// Newest returns the newest valid checkpoint, or nil.
func (s *Store) Newest() (*Checkpoint, error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	for i := len(ids) - 1; i >= 0; i-- {
		if c, err := s.Load(ids[i]); err == nil {
			return c, nil
		}
	}
	return nil, nil
}

// ErrNoCheckpoints means the store is empty.
var ErrNoCheckpoints = errors.New("no checkpoints yet")

// Resolve finds a checkpoint by any name the commands take: @N, the Nth
// newest that is not a restore's backup (@0 is the newest), as list numbers
// them; :/TEXT, the newest whose prompt or description contains TEXT
// (Mentions); an id or a unique id prefix; else a pin label or a
// description, whole (the newest carrying it). Restore backups are named by
// id or id prefix only.
func (s *Store) Resolve(name string) (*Checkpoint, error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, ErrNoCheckpoints
	}
	if name == "" {
		return nil, errors.New("an empty checkpoint name: give @N, an id, a pin label or :/TEXT")
	}
	if rest, ok := strings.CutPrefix(name, "@"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad checkpoint name %q: @ takes a number (@0 is the newest)", name)
		}
		cps, _, err := s.List()
		if err != nil {
			return nil, err
		}
		visible := slices.DeleteFunc(cps, (*Checkpoint).Backup)
		if n >= len(visible) {
			return nil, &NoCheckpointError{Name: name, AtN: true, Visible: len(visible)}
		}
		return visible[n], nil
	}
	if text, ok := strings.CutPrefix(name, SearchPrefix); ok {
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("bad checkpoint name %q: %s takes words to search for", name, SearchPrefix)
		}
		cps, _, err := s.List()
		if err != nil {
			return nil, err
		}
		if c := findMentioning(cps, text); c != nil {
			return c, nil
		}
		return nil, &NoCheckpointError{Name: text, Search: true}
	}
	var match []string
	for _, id := range ids {
		if id == name {
			return s.Load(id)
		}
		if strings.HasPrefix(id, name) {
			match = append(match, id)
		}
	}
	if len(match) == 1 {
		return s.Load(match[0])
	}
	cps, _, err := s.List()
	if err != nil {
		return nil, err
	}
	if c := findNamed(cps, name); c != nil {
		return c, nil
	}
	if len(match) == 0 {
		return nil, &NoCheckpointError{Name: name}
	}
	return nil, fmt.Errorf("checkpoint name %q is ambiguous: it starts %d ids (%s, …); give more of it", name, len(match), match[0])
}
