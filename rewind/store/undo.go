package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"rewind.dev/snap"
)

// Undo restores the code to before the step the agent just took: to the
// newest checkpoint when the tree has changed since it, else to the one
// before it. Restore backups are not steps (as they are not rows of 'rewind
// list'): a backup holds the tree a restore replaced, and going back to it
// would undo the restore, which is undo-restore's work.
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
	cps = slices.DeleteFunc(cps, (*Checkpoint).Backup)
	if len(cps) == 0 {
		return nil, ErrNoCheckpoints
	}
	target := cps[0]
	changed := false
	err = s.Diff(ctx, cps[0], nil, func(snap.Change) error {
		changed = true
		return errFound // (one is enough)
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, fmt.Errorf("compare the tree with checkpoint %s: %w", cps[0].ID, err)
	}
	if !changed {
		if len(cps) < 2 {
			return nil, ErrNothingToUndo
		}
		target = cps[1]
	}
	return s.restoreLocked(ctx, target, RestoreOptions{Code: true, DryRun: dryRun, Kind: KindUndo})
}

// errFound ends a pass over changes once what it looks for is found.
var errFound = errors.New("found")

// Diff hands fn what changed from checkpoint from to checkpoint to, or,
// when to is nil, to the project's tree as it is now (walked with the
// project's ignore patterns, as a save would), in path order and as they
// are found (see snap.DiffEach). An error from fn ends it and is
// returned.
func (s *Store) Diff(ctx context.Context, from, to *Checkpoint, fn func(snap.Change) error) error {
	old, err := snap.OpenManifest(from.ManifestPath()) // (compared in walk order: not held)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", from.ID, err)
	}
	if to != nil {
		cur, err := snap.OpenManifest(to.ManifestPath()) // (read beside old: not held)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", to.ID, err)
		}
		return snap.DiffEach(ctx, snap.DiffOptions{From: old, To: cur, Fold: snap.ProbeFolding(s.Project)}, fn)
	}
	walk, err := s.walkOptions()
	if err != nil {
		return err
	}
	return snap.DiffEach(ctx, snap.DiffOptions{From: old, Root: s.Project, Walk: walk}, fn)
}
