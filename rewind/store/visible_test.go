package store

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestGCKeepCountsWhatListShows: after a restore, gc --keep 1 keeps the
// newest checkpoint list shows — not the restore's backup in its place,
// with the checkpoint the user saw last deleted and its tree left only in
// a backup list does not show. The backup stays too: undo-restore needs
// it. Retention at a hook, which plans from the store's index, counts the
// same way.
func TestGCKeepCountsWhatListShows(t *testing.T) {
	t.Parallel()
	for _, hook := range []bool{false, true} {
		t.Run(map[bool]string{false: "gc", true: "retention"}[hook], func(t *testing.T) {
			s := project(t)
			var cps []*Checkpoint
			for _, v := range []string{"a", "b", "c"} {
				write(t, s.Project, "f.txt", v)
				cps = append(cps, save(t, s, SaveOptions{}))
			}
			r, err := s.Restore(ctx, cps[0], RestoreOptions{Code: true})
			if err != nil {
				t.Fatal(err)
			}
			o := GCOptions{Keep: 1}
			if hook {
				o.Budget = time.Minute
				indexAgrees(t, s) // (the backup's line says it is one)
			}
			res, err := s.GC(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if ids, want := mustIDs(t, s), []string{cps[2].ID, r.Backup}; !slices.Equal(ids, want) {
				t.Fatalf("gc --keep 1 left %v, want the newest listed and the backup %v (%+v)", ids, want, res)
			}
			if res.Kept != 2 {
				t.Errorf("gc says %d kept, want 2", res.Kept)
			}
			if c, err := s.Resolve("@0"); err != nil || c.ID != cps[2].ID {
				t.Fatalf("@0 is %v (%v), want %s", c, err, cps[2].ID)
			}
			if _, err := s.Restore(ctx, cps[2], RestoreOptions{Code: true}); err != nil {
				t.Fatal(err)
			}
			if got := read(t, filepath.Join(s.Project, "f.txt")); got != "c" {
				t.Fatalf("the checkpoint kept restores f.txt %q, want c", got)
			}
			for _, want := range []string{"a", "c"} { // undo both restores
				if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
					t.Fatal(err)
				}
				if got := read(t, filepath.Join(s.Project, "f.txt")); got != want {
					t.Fatalf("undo-restore brought back f.txt %q, want %q", got, want)
				}
			}
		})
	}
}

// TestRevertStepEndsAtTheNextListed: a restore's backup taken between two
// checkpoints list shows one after the other does not end the older one's
// step: revert takes back what changed between the two, as it would had
// nothing been restored between them.
func TestRevertStepEndsAtTheNextListed(t *testing.T) {
	t.Parallel()
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
	res, err := s.Revert(ctx, p1, RevertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.To != p2.ID || res.Backup == "" {
		t.Fatalf("revert of %s: to %q, backup %q; want to %s, with a backup", p1.ID, res.Plan.To, res.Backup, p2.ID)
	}
	if got := read(t, filepath.Join(s.Project, "g.txt")); got != "<open "+filepath.Join(s.Project, "g.txt")+": no such file or directory>" {
		t.Errorf("g.txt, added by the step, is still there: %q", got)
	}
	if got := read(t, filepath.Join(s.Project, "f.txt")); got != "1\n" {
		t.Errorf("f.txt = %q, want it as it was", got)
	}
}
