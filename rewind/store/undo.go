package store

import (
	"context"
	"errors"

	"rewind.dev/snap"
)

// Undo restores the code to before the step the agent just took: to the
// newest checkpoint when the tree has changed since it, else to the one
// before it.
func (s *Store) Undo(ctx context.Context, dryRun bool) (*RestoreResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	cps, _, err := s.List()
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		return nil, ErrNoCheckpoints
	}
	target := cps[0]
	changes, err := snap.DiffManifest(ctx, s.Project, mustManifest(cps[0]), snap.WalkOptions{})
	if err == nil && len(changes) == 0 {
		if len(cps) < 2 {
			return nil, &HintError{Err: errors.New("nothing to undo: the tree equals the only checkpoint"), Hint: "'rewind list' shows the checkpoints"}
		}
		target = cps[1]
	}
	return s.restoreLocked(ctx, target, RestoreOptions{Code: true, DryRun: dryRun, Kind: KindUndo})
}

func mustManifest(c *Checkpoint) *snap.Manifest {
	m, err := snap.ReadManifest(c.ManifestPath())
	if err != nil {
		return &snap.Manifest{}
	}
	return m
}
