package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store/record"
)

// Files inside a checkpoint folder (see package record).
const (
	SnapshotFile   = record.SnapshotFile
	ManifestFile   = record.ManifestFile
	TranscriptFile = record.TranscriptFile
	MetadataFile   = record.MetadataFile
)

// Metadata is a checkpoint's metadata.json (see record.Metadata).
type Metadata = record.Metadata

// writeMetadata replaces a checkpoint's metadata.json atomically (md.Sum
// set to its checksum).
func writeMetadata(dir string, md *Metadata) error {
	b, err := record.Encode(md)
	if err != nil {
		return err
	}
	return durable.WriteFile(filepath.Join(dir, MetadataFile), b, layout.FileMode)
}

// TriggerKind is what took a checkpoint.
type TriggerKind = record.TriggerKind

const (
	TriggerManual     = record.TriggerManual     // rewind save
	TriggerHook       = record.TriggerHook       // an agent's hook event (Event says which)
	TriggerPreRestore = record.TriggerPreRestore // the backup a restore takes first
)

// The parts of a checkpoint's metadata (see package record).
type (
	Trigger    = record.Trigger
	Snapshot   = record.Snapshot
	Changes    = record.Changes
	Transcript = record.Transcript
)

// Checkpoint is one checkpoint of the store (see record.Checkpoint).
type Checkpoint = record.Checkpoint

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
	if err := record.CheckSum(b); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	if c.Metadata, err = record.Decode(b, false); err != nil {
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
