package cli

import "rewind.dev/rewind/store"

// checkpointJSON is a checkpoint as --json prints it, the same object in
// every command: a line of list, what show and save print, each of a log
// session's checkpoints. N is its @N (absent for a restore's backup, which
// has none), Path its folder in the store.
type checkpointJSON struct {
	Type       string           `json:"type"` // "checkpoint"
	N          *int             `json:"n,omitempty"`
	Checkpoint checkpointObject `json:"checkpoint"`
	Path       string           `json:"path"`
}

func newCheckpointJSON(cp *store.Checkpoint, n *int) checkpointJSON {
	return checkpointJSON{Type: "checkpoint", N: n, Checkpoint: newCheckpointObject(&cp.Metadata), Path: cp.Dir}
}

// checkpointObject is a checkpoint's metadata as --json prints it: whole,
// as metadata.json holds it, and, until the next release, hasTranscript:
// has_transcript under the name it had before every key was snake_case
// (see JSON OUTPUT in rewind(1)).
type checkpointObject struct {
	*store.Metadata
	OldHasTranscript bool `json:"hasTranscript"`
}

func newCheckpointObject(md *store.Metadata) checkpointObject {
	return checkpointObject{Metadata: md, OldHasTranscript: md.HasTranscript}
}

// atN is cp's @N as list numbers it: how many checkpoints newer than cp
// are not restore backups (what is not a checkpoint is not counted, as list
// leaves it out); nil for a backup. It reads the metadata of the newer
// ones only.
func atN(s *store.Store, cp *store.Checkpoint) (*int, error) {
	if cp.Backup() {
		return nil, nil
	}
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	n := 0
	for i := len(ids) - 1; i >= 0 && store.CompareIDs(ids[i], cp.ID) > 0; i-- {
		if c, err := s.Load(ids[i]); err == nil && !c.Backup() {
			n++
		}
	}
	return &n, nil
}
