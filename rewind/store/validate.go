package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"rewind.dev/rewind/store/verify"
)

// Problem is one thing validate found wrong (see verify.Problem).
type Problem = verify.Problem

// DamageError is a checkpoint that does not restore, and why.
type DamageError = verify.DamageError

// checks is the store as package verify reads it.
func (s *Store) checks() verify.Store {
	return verify.Store{Dir: s.Dir, Version: Version, Load: s.Load, Limits: s.Limits, Unreadable: s.unreadable}
}

// newChecker is a checker of the store's checkpoints (see verify.New).
func (s *Store) newChecker(ctx context.Context) *verify.Checker {
	return verify.New(ctx, s.checks())
}

// unreadable says why checkpoint id, whose metadata did not load (err),
// cannot be read, when it is another user's; else "".
func (s *Store) unreadable(id string, err error) string {
	if u := s.forGC().NotYours(id, false); u != nil && errors.Is(err, fs.ErrPermission) {
		return fmt.Sprintf("not readable: it belongs to %s, not to you; %s gives it back", u.Whose(), u.Fix)
	}
	return ""
}

// Validate checks the configuration files and every checkpoint end to end,
// by the checks every restore makes (see verify.Checkpoints), reading every
// file whole again. It returns every problem found and how many
// checkpoints it checked, and records what it read in the verified file.
func (s *Store) Validate(ctx context.Context) ([]Problem, int, error) {
	var probs []Problem
	add := func(what, format string, args ...any) {
		probs = append(probs, Problem{Type: "problem", What: what, Issue: fmt.Sprintf(format, args...)})
	}
	if _, err := s.Config(); err != nil {
		add("config", "%v", err)
	}
	if _, err := s.LastSession(); err != nil {
		add(filepath.Join(s.Dir, "session.json"), "%v", err)
	}
	if _, err := s.History(); err != nil {
		add(filepath.Join(s.Dir, "restore-history.json"), "%v", err)
	}
	// Leftovers of a killed run in staging/ are not a problem: no listed
	// checkpoint depends on them, and the next save removes them.
	ids, err := s.IDs()
	if err != nil {
		return nil, 0, err
	}
	found, err := verify.Checkpoints(ctx, s.checks(), ids, cmp.Or(s.validatePart, minValidatePart), s.validateRuns)
	return append(probs, found...), len(ids), err
}

// minValidatePart is the fewest checkpoints validate checks in a run of
// their own (see verify.Checkpoints).
const minValidatePart = 1024

// Damage is the damage the store knows of without reading any archive: the
// files the verified file records a problem for (as they still are), and
// whether the newest checkpoint — what the next save builds on — passes the
// cheap checks.
func (s *Store) Damage() []string {
	newest, err := s.Newest()
	if err != nil {
		newest = nil
	}
	return verify.Damage(s.checks(), newest)
}
