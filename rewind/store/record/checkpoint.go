package record

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
)

// Files inside a checkpoint folder.
const (
	SnapshotFile   = "snapshot.tar.gz"
	ManifestFile   = "manifest"
	TranscriptFile = "transcript.jsonl.gz"
	MetadataFile   = "metadata.json"
)

// The kinds of trigger that take a checkpoint.
const (
	TriggerManual     TriggerKind = "manual"      // rewind save
	TriggerHook       TriggerKind = "hook"        // an agent's hook event (Event says which)
	TriggerPreRestore TriggerKind = "pre-restore" // the backup a restore takes first
)

// Checkpoint is a checkpoint's record and the folder that holds it.
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

// TranscriptChain lists the gzip files that hold c's transcript, oldest
// first, loading the checkpoints it builds on with load: inflated and
// concatenated they are the transcript's bytes
// [0, c.Transcript.Cursor.ByteOffsetEnd).
func TranscriptChain(c *Checkpoint, load func(id string) (*Checkpoint, error)) ([]string, error) {
	var chain []string
	seen := map[string]bool{}
	for cur := c; ; {
		if cur.Transcript == nil || cur.Transcript.Snapshot == "" {
			return nil, fmt.Errorf("checkpoint %s holds no transcript", cur.ID)
		}
		chain = append(chain, filepath.Join(cur.Dir, cur.Transcript.Snapshot))
		if cur.Transcript.Base == "" {
			slices.Reverse(chain)
			return chain, nil
		}
		if seen[cur.Transcript.Base] {
			return nil, fmt.Errorf("checkpoint %s: transcript chain loops", c.ID)
		}
		seen[cur.Transcript.Base] = true
		next, err := load(cur.Transcript.Base)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: its transcript builds on %s, which is gone: %w", c.ID, cur.Transcript.Base, err)
		}
		cur = next
	}
}

// SumTranscript inflates the files of c's transcript chain after those
// from sums (what inflating the chain before them found, nil for none),
// checks the whole against c's cursor, and returns what it found.
func SumTranscript(ctx context.Context, c *Checkpoint, chain []string, from *TranscriptSum) (*TranscriptSum, error) {
	r, err := OpenTranscript(chain)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: transcript: %w", c.ID, err)
	}
	defer r.Close()
	t := from.Clone()
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	buf := *bp
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := r.Read(buf)
		t.Write(buf[:m])
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("transcript does not inflate: %w", err)
		}
	}
	return t, t.Check(c.Transcript.Cursor)
}

// readBuffers are what SumTranscript inflates into: validate sums a
// transcript per checkpoint, and a fresh 64 KiB buffer for each was much of
// what it allocated.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}
