package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

// TestRestoreStoppedPartWay: a restore that stops part way through changing
// the tree (here a file it must delete is immutable, chattr +i) fails with
// exit 1, says nothing of what it would have written or deleted — no
// "Restored" line — and names its backup; undo-restore then brings back
// the tree as it was. Run as root (chattr); skipped otherwise.
func TestRestoreStoppedPartWay(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	if _, _, err := store.Init(dir, layout.ModeProject); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr strings.Builder
		code := Main(context.Background(), append([]string{"-C", dir}, args...), strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	write("a", "1")
	if code, _, stderr := run("save"); code != 0 {
		t.Fatalf("save: %s", stderr)
	}
	write("a", "2")
	write("b", "new") // deleted by the restore, before it stops at c
	write("c", "new")
	if out, err := exec.Command("chattr", "+i", filepath.Join(dir, "c")).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot make a file immutable (%v: %s); run as root on a file system that can", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", filepath.Join(dir, "c")).Run() })

	code, stdout, stderr := run("restore", "@0", "--yes")
	if code != 1 || strings.Contains(stdout, "Restored") || strings.Contains(stdout, "delete") || !strings.Contains(stdout, "Backup checkpoint") ||
		!strings.Contains(stderr, "rewind: error: restore the tree from") {
		t.Fatalf("a restore that stopped part way: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
		t.Fatal("the restore did not get as far as deleting b: the test proves nothing")
	}

	exec.Command("chattr", "-i", filepath.Join(dir, "c")).Run()
	if code, stdout, stderr := run("undo-restore", "--yes"); code != 0 || !strings.Contains(stdout, "Undid") {
		t.Fatalf("undo-restore: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for name, want := range map[string]string{"a": "2", "b": "new", "c": "new"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("after undo-restore, %s = %q (%v), want %q", name, b, err, want)
		}
	}
}
