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
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "12345", "b/c.txt": "123", "d.txt": ""})
	var p Progress
	out := filepath.Join(t.TempDir(), "s.tar.gz")
	if _, err := createWalked(WithProgress(context.Background(), &p), dir, CreateOptions{Out: out}); err != nil {
		t.Fatal(err)
	}
	if f, b := p.Done.Load(), p.Bytes.Load(); f != 3 || b != 8 {
		t.Errorf("create counted %d files, %d bytes; want 3, 8", f, b)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed"), 0o644)
	var r Progress
	if _, err := Restore(WithProgress(context.Background(), &r), dir, out, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if f, b := r.Done.Load(), r.Bytes.Load(); f != 1 || b != 5 {
		t.Errorf("restore counted %d files, %d bytes; want 1, 5", f, b)
	}
	// Without one, nothing is counted and nothing fails.
	if _, err := Restore(context.Background(), dir, out, RestoreOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
}

// TestProgressTotals: where the work knows its size — a snapshot once the
// walk has found what it reads, a restore over a manifest once it has
// planned — it says so first, and its counts reach those totals when it is
// done.
func TestProgressTotals(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir, snaps := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		files[filepath.Join("d", string(rune('a'+i%26)), "f"+string(rune('a'+i/26)))] = string(make([]byte, i*100))
	}
	writeTree(t, dir, files)
	_, m := layerSave(t, dir, snaps, 0, 0)
	writeTree(t, dir, map[string]string{"d/a/fa": "changed", "new.txt": "new"})
	var p Progress
	out := filepath.Join(snaps, "1")
	os.MkdirAll(out, 0o755)
	if _, err := createWalked(WithProgress(context.Background(), &p), dir, CreateOptions{Out: filepath.Join(out, "snapshot.tar.gz"), Layer: true, Parent: m}); err != nil {
		t.Fatal(err)
	}
	if f, b, tf, tb := p.Done.Load(), p.Bytes.Load(), p.Total.Load(), p.TotalBytes.Load(); f != 2 || b != 10 || tf != f || tb != b || p.Began.Load() == 0 {
		t.Errorf("a layer counted %d of %d files, %d of %d bytes; want 2 of 2, 10 of 10", f, tf, b, tb)
	}
	if err := os.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	mf, err := OpenManifest(filepath.Join(snaps, "0", "manifest"))
	if err != nil {
		t.Fatal(err)
	}
	var r Progress
	res, err := Restore(WithProgress(context.Background(), &r), dir, "", RestoreOptions{Manifest: mf})
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	var bytes int64
	for i := range 40 {
		bytes += int64(i * 100)
	}
	if f, b, tf, tb := r.Done.Load(), r.Bytes.Load(), r.Total.Load(), r.TotalBytes.Load(); f != 40 || tf != 40 || b != bytes || tb != bytes || int64(res.Written) != tf {
		t.Errorf("a restore counted %d of %d files, %d of %d bytes, and wrote %d; want 40 of 40, %d of %d, 40", f, tf, b, tb, res.Written, bytes, bytes)
	}
}
