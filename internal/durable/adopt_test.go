//go:build unix

package durable

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAdopt: a file handed over lands at the name with the mode asked for,
// linked (the same file, its bytes not written again) where the two are on
// one file system and copied where not, survives the removal of the
// source, leaves no temporary file, and with NoReplace refuses a taken name.
func TestAdopt(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10)
	check := func(t *testing.T, srcDir string, linked bool) {
		dir := t.TempDir()
		src := filepath.Join(srcDir, "src")
		if err := os.WriteFile(src, want, 0o600); err != nil {
			t.Fatal(err)
		}
		srcInfo, _ := os.Stat(src)
		dst := filepath.Join(dir, "dst")
		if err := Adopt(dst, 0o644, src, NoReplace); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(dst)
		if err != nil {
			t.Fatal(err)
		}
		if got := os.SameFile(fi, srcInfo); got != linked {
			t.Errorf("linked %v, want %v", got, linked)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644", fi.Mode().Perm())
		}
		if err := os.Remove(src); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("adopted file holds %d bytes (%v), want %d", len(got), err, len(want))
		}
		os.WriteFile(src, want, 0o600)
		if err := Adopt(dst, 0o644, src, NoReplace); !errors.Is(err, fs.ErrExist) {
			t.Errorf("adopt onto a taken name with NoReplace: %v, want fs.ErrExist", err)
		}
		if got := names(t, dir); len(got) != 1 {
			t.Errorf("folder holds %v, want dst only", got)
		}
	}
	t.Run("one file system", func(t *testing.T) { check(t, t.TempDir(), true) })
	t.Run("two file systems", func(t *testing.T) {
		other := os.Getenv("XDG_RUNTIME_DIR")
		for _, d := range []string{"/dev/shm", other} {
			if d == "" || !otherDevice(t, d) {
				continue
			}
			sub, err := os.MkdirTemp(d, "adopt-test-")
			if err != nil {
				continue
			}
			defer os.RemoveAll(sub)
			check(t, sub, false)
			return
		}
		t.Skip("no second file system to adopt from")
	})
}

// otherDevice reports whether d is on another file system than the tests'
// temporary folders.
func otherDevice(t *testing.T, d string) bool {
	a, err1 := os.Stat(d)
	b, err2 := os.Stat(t.TempDir())
	if err1 != nil || err2 != nil {
		return false
	}
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev != sb.Dev
}
