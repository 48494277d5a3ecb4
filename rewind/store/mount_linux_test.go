package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreAcrossMountsAndUndo: in a project with a tmpfs mounted at
// sub/mnt, a restore brings the checkpoint back on both file systems, and
// undo-restore the tree it replaced, each exactly. Run as root (it
// mounts); skipped otherwise.
func TestRestoreAcrossMountsAndUndo(t *testing.T) {
	t.Parallel()
	s := project(t)
	mnt := filepath.Join(s.Project, "sub", "mnt")
	os.MkdirAll(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m,mode=755", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs on %s (%v: %s); run as root to test mounts in the tree", mnt, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	for name, content := range map[string]string{"a": "1", "sub/b": "1", "sub/mnt/a": "1", "sub/mnt/d/x": "x", "sub/mnt/gone": "g"} {
		write(t, s.Project, name, content)
	}
	cp := save(t, s, SaveOptions{})
	want := treeState(t, s.Project)

	write(t, s.Project, "a", "2")
	write(t, s.Project, "sub/mnt/a", "2")
	os.RemoveAll(filepath.Join(mnt, "d"))
	write(t, s.Project, "sub/mnt/d", "now a file")
	write(t, s.Project, "sub/mnt/new/y", "y")
	os.Remove(filepath.Join(mnt, "gone"))
	os.Remove(filepath.Join(s.Project, "main.go"))
	changed := treeState(t, s.Project)

	if _, err := s.Restore(ctx, cp, RestoreOptions{Code: true}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got := treeState(t, s.Project); got != want {
		t.Fatalf("after the restore:\n%s\nwant:\n%s", got, want)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatalf("undo-restore: %v", err)
	}
	if got := treeState(t, s.Project); got != changed {
		t.Fatalf("after undo-restore:\n%s\nwant:\n%s", got, changed)
	}
}
