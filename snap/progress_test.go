package snap

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestProgress: a snapshot counts the files and bytes it reads into its
// archive, a restore those it writes, in the Progress its context carries.
func TestProgress(t *testing.T) {
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "12345", "b/c.txt": "123", "d.txt": ""})
	var p Progress
	out := filepath.Join(t.TempDir(), "s.tar.gz")
	if _, err := Create(WithProgress(context.Background(), &p), dir, CreateOptions{Out: out}); err != nil {
		t.Fatal(err)
	}
	if f, b := p.Files.Load(), p.Bytes.Load(); f != 3 || b != 8 {
		t.Errorf("create counted %d files, %d bytes; want 3, 8", f, b)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed"), 0o644)
	var r Progress
	if _, err := Restore(WithProgress(context.Background(), &r), dir, out, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if f, b := r.Files.Load(), r.Bytes.Load(); f != 1 || b != 5 {
		t.Errorf("restore counted %d files, %d bytes; want 1, 5", f, b)
	}
	// Without one, nothing is counted and nothing fails.
	if _, err := Restore(context.Background(), dir, out, RestoreOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
}
