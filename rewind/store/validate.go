package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"rewind.dev/snap"
)

// Problem is one thing validate found wrong.
type Problem struct {
	Type  string `json:"type"` // "problem"
	What  string `json:"what"` // the thing: a file, a checkpoint id
	Issue string `json:"issue"`
}

// Validate checks the configuration files and every checkpoint end to end,
// by the checks every restore makes (see verify.go), reading every file
// whole again: metadata and its checksum, the manifest chain, every file's
// content in the archive that holds it (content hashes, gzip checksums; each
// archive is read once), the tree hash against the metadata, and the
// transcript chain against its cursor. It returns every problem found, and
// records what it read in the verified file.
func (s *Store) Validate(ctx context.Context) ([]Problem, int, error) {
	var probs []Problem
	add := func(what, format string, args ...any) {
		probs = append(probs, Problem{Type: "problem", What: what, Issue: fmt.Sprintf(format, args...)})
	}
	if _, err := s.Config(); err != nil {
		add("config", "%v", err)
	}
	if _, err := s.Session(); err != nil {
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
	k := s.newChecker(ctx, true)
	defer k.save()
	// Reading the archives is most of the work: they are read in id order
	// (the order the checks need them) beside the checks.
	var layers []string
	if des, err := os.ReadDir(s.layersDir()); err == nil {
		for _, de := range des {
			if id, ok := strings.CutSuffix(de.Name(), ".tar.gz"); ok && isID(id) {
				layers = append(layers, filepath.Join(s.layersDir(), de.Name()))
			}
		}
	}
	stop := k.v.ReadAhead(ctx, layers, s.Limits().Or(snap.DefaultLimits))
	defer stop()
	p := progressFrom(ctx)
	p.begin(len(ids))
	for _, id := range ids {
		p.add(1)
		c, err := k.load(id)
		if err != nil {
			add(id, "not a checkpoint: %v", err)
			continue
		}
		if err := k.check(c, partAll); err != nil {
			if ctx.Err() != nil {
				return probs, len(ids), ctx.Err()
			}
			add(id, "%v", errors.Unwrap(err))
		}
	}
	return probs, len(ids), nil
}
