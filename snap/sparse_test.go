//go:build unix

package snap

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// allocated is the disk space a file takes.
func allocated(t *testing.T, p string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestSparseFilesKeepTheirHoles: a sparse file comes back sparse, from an
// archive read whole (over a tree and into an empty folder) and through a
// manifest, and byte for byte.
func TestSparseFilesKeepTheirHoles(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "sparse.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("head"), 0)
	f.WriteAt([]byte("middle"), 32<<20)
	f.Truncate(64 << 20) // ends in a hole
	f.Close()
	if allocated(t, p) > 1<<20 {
		t.Skip("this file system does not keep holes")
	}
	want, _ := os.ReadFile(p)
	snaps := t.TempDir()
	_, m := layerSave(t, dir, snaps, 0, 0)
	for name, opts := range map[string]RestoreOptions{"archive": {}, "manifest": {Manifest: m}} {
		os.Remove(p)
		if _, err := Restore(context.Background(), dir, filepath.Join(snaps, "0", "snapshot.tar.gz"), opts); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: restored content differs", name)
		}
		if a := allocated(t, p); a > 1<<20 {
			t.Errorf("%s: the restored 64 MiB file takes %d bytes on disk: its holes were filled", name, a)
		}
	}
	empty := t.TempDir() // written as the archive is read (extract)
	if _, err := Restore(context.Background(), empty, filepath.Join(snaps, "0", "snapshot.tar.gz"), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(empty, "sparse.img")
	if got, _ := os.ReadFile(q); !bytes.Equal(got, want) {
		t.Fatal("into an empty folder: restored content differs")
	}
	if a := allocated(t, q); a > 1<<20 {
		t.Errorf("into an empty folder: the restored 64 MiB file takes %d bytes on disk: its holes were filled", a)
	}
}
