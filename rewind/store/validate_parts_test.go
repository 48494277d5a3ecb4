package store

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestValidateInPartsFindsTheSame damages each file of a chain in turn: a
// validate split into runs of a checkpoint or two, each on its own
// checker, flags the same checkpoints as one run over all of them.
func TestValidateInPartsFindsTheSame(t *testing.T) {
	t.Parallel()
	base, _ := chainStore(t)
	flagged := func(s *Store, part int) []string {
		t.Helper()
		s.validatePart, s.validateRuns = part, 4
		probs, _, err := s.Validate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range probs {
			ids = append(ids, p.What)
		}
		return ids
	}
	for i, f := range storeFiles(base) {
		rel, _ := filepath.Rel(base.Dir, f)
		kind := []string{"removed", "truncated", "a flipped byte", "garbage"}[i%4]
		t.Run(rel+"/"+kind, func(t *testing.T) {
			one, parts := cloneStore(t, base), cloneStore(t, base)
			damages[kind](filepath.Join(one.Dir, rel))
			damages[kind](filepath.Join(parts.Dir, rel))
			want, got := flagged(one, 1<<30), flagged(parts, 1)
			if !slices.Equal(got, want) {
				t.Errorf("in parts validate flags %q; in one run, %q", got, want)
			}
		})
	}
}
