package store

import (
	"path/filepath"
	"testing"
)

// TestRevertStepEndsAtTheNextListed: a restore's backup taken between two
// checkpoints list shows one after the other does not end the older one's
// step: revert takes back what changed between the two, as it would had
// nothing been restored between them.
func TestRevertStepEndsAtTheNextListed(t *testing.T) {
	s := project(t)
	write(t, s.Project, "f.txt", "1\n")
	p1 := save(t, s, SaveOptions{})
	write(t, s.Project, "f.txt", "2\n") // never saved: the restore's backup holds it
	if _, err := s.Restore(ctx, p1, RestoreOptions{Code: true}); err != nil {
		t.Fatal(err)
	}
	write(t, s.Project, "g.txt", "added\n")
	p2 := save(t, s, SaveOptions{})
	if end, err := s.StepEnd(p1); err != nil || end == nil || end.ID != p2.ID {
		t.Fatalf("StepEnd(%s) = %v, %v; want %s", p1.ID, end, err, p2.ID)
	}
	res, err := s.RevertStep(ctx, p1, RevertStepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revert.To != p2.ID || res.Backup == "" {
		t.Fatalf("revert of %s: to %q, backup %q; want to %s, with a backup", p1.ID, res.Revert.To, res.Backup, p2.ID)
	}
	if got := read(t, filepath.Join(s.Project, "g.txt")); got != "<open "+filepath.Join(s.Project, "g.txt")+": no such file or directory>" {
		t.Errorf("g.txt, added by the step, is still there: %q", got)
	}
	if got := read(t, filepath.Join(s.Project, "f.txt")); got != "1\n" {
		t.Errorf("f.txt = %q, want it as it was", got)
	}
}

func mustIDs(t *testing.T, s *Store) []string {
	t.Helper()
	ids, err := s.IDs()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
