package durable

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestCopy: a copy (an APFS clone on macOS, copied bytes elsewhere) holds the source's bytes
// with the mode asked for, leaves no temporary file, and with NoReplace refuses a taken name.
func TestCopy(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: more than one block
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, want, 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() *os.File {
		f, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	dst := filepath.Join(dir, "dst")
	if err := Copy(dst, 0o600, open(), NoReplace); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("copy holds %d bytes (%v), want %d", len(got), err, len(want))
	}
	if fi, _ := os.Stat(dst); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	// The copy is its own file: changing it leaves the source alone (a clone's blocks are
	// copied on write).
	if err := os.WriteFile(dst, []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(src); !bytes.Equal(got, want) {
		t.Error("writing the copy changed the source")
	}
	if err := Copy(dst, 0o600, open(), NoReplace); !errors.Is(err, fs.ErrExist) {
		t.Errorf("copy onto a taken name with NoReplace: %v, want fs.ErrExist", err)
	}
	if got := names(t, dir); len(got) != 2 {
		t.Errorf("folder holds %v, want src and dst only", got)
	}
}
