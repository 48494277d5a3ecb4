package durable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTryLock: a second open of a locked file cannot lock it until the holder unlocks or
// closes it (flock and LockFileEx both lock per open file, not per process).
func TestTryLock(t *testing.T) {
	if !haveLocks {
		t.Skip("no file locks on this system")
	}
	p := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := TryLock(a); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b); err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	b.Close()
	if err := TryLock(a); err != nil {
		t.Fatalf("after the holder closed: %v", err)
	}
}

// TestSync: a file and a folder sync on every system (on macOS through F_FULLFSYNC, or fsync
// where the file system has none).
func TestSync(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("x"); err != nil {
		t.Fatal(err)
	}
	if err := Sync(f); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}
