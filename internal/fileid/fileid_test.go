package fileid

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestFileID: where the system keeps them, a file's inode and change time are read, and a hard
// link is counted; elsewhere they read as unknown.
func TestFileID(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		if Inode(fi) != 0 || Links(fi) != 1 || ChangeTime(fi) != 0 {
			t.Errorf("inode %d, links %d, ctime %d: want 0, 1, 0", Inode(fi), Links(fi), ChangeTime(fi))
		}
		return
	}
	if Inode(fi) == 0 || ChangeTime(fi) == 0 || Links(fi) != 1 {
		t.Errorf("inode %d, links %d, ctime %d", Inode(fi), Links(fi), ChangeTime(fi))
	}
	if err := os.Link(p, filepath.Join(dir, "g")); err != nil {
		t.Skip(err)
	}
	fi2, _ := os.Lstat(p)
	if Links(fi2) != 2 || Inode(fi2) != Inode(fi) {
		t.Errorf("after a hard link: inode %d (was %d), links %d", Inode(fi2), Inode(fi), Links(fi2))
	}
}
