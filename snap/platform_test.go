package snap

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestPlatformCalls: the few calls each system implements its own way (walk_unix.go and
// dirents_linux.go or dirents_unix.go; walk_other.go, rawfile_*.go, open_*.go) list, stat, read
// and refuse the same things on every system.
func TestPlatformCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var want []string
	pad := strings.Repeat("x", 60)
	for i := range 1000 { // more than one 64 KiB getdents buffer holds
		name := fmt.Sprintf("%04d-%s", i, pad)
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	want = append(want, "f", "d")
	link := runtime.GOOS != "windows" // symlinks there need a privilege
	if link {
		if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
			t.Fatal(err)
		}
		want = append(want, "l")
	}

	fd, names, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDir(fd)
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("openDir listed %d names, want %d", len(names), len(want))
	}

	if e, err := lstatAt(fd, "f", "f"); err != nil || e.Kind != KindFile || e.Size != 5 || e.MTime == 0 {
		t.Errorf("lstatAt f: %+v, %v", e, err)
	}
	if e, err := lstatAt(fd, "d", "d"); err != nil || e.Kind != KindDir {
		t.Errorf("lstatAt d: %+v, %v", e, err)
	}
	if _, err := lstatAt(fd, "gone", "gone"); !changed(err) {
		t.Errorf("lstatAt of a missing name: %v, want a change", err)
	}

	f, err := openRaw(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.stat("f")
	if err != nil || e.Kind != KindFile || e.Size != 5 {
		t.Errorf("rawFile stat: %+v, %v", e, err)
	}
	b := make([]byte, 16)
	n, err := f.read(b)
	if err != nil || string(b[:n]) != "hello" {
		t.Errorf("rawFile read: %q, %v", b[:n], err)
	}
	if n, err := f.read(b); n != 0 || err != nil {
		t.Errorf("rawFile read at the end: %d, %v", n, err)
	}
	f.close()

	if !link {
		return
	}
	if e, err := lstatAt(fd, "l", "l"); err != nil || e.Kind != KindSymlink {
		t.Errorf("lstatAt l: %+v, %v", e, err)
	}
	if target, err := readlinkat(fd, "l"); err != nil || target != "f" {
		t.Errorf("readlinkat: %q, %v", target, err)
	}
	if _, err := openRaw(filepath.Join(dir, "l")); !changed(err) {
		t.Errorf("openRaw of a symlink: %v, want it refused as a change", err)
	}
	if _, err := openAt(fd, "l"); err == nil {
		t.Error("openAt followed a symlink")
	}
	if f, err := openNoFollow(filepath.Join(dir, "l")); !changed(err) {
		if f != nil {
			f.Close()
		}
		t.Errorf("openNoFollow of a symlink: %v, want it refused as a change", err)
	}
}
