//go:build unix

package reliability

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size (e.g. "8m") on dir, or skips the test
// saying why (not root, no mount permission in this container).
func mountTmpfs(t testing.TB, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs on %s (%v: %s); run as root to test full disks", dir, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// readOnly makes dir read-only for everyone, root included: a read-only
// bind mount of it on itself (or chmod when not root, which then suffices).
func readOnly(t testing.TB, dir string) (undo func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		exec.Command("chmod", "-R", "a-w", dir).Run()
		return func() { exec.Command("chmod", "-R", "u+w", dir).Run() }
	}
	if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot bind-mount %s (%v: %s)", dir, err, strings.TrimSpace(string(out)))
	}
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
		exec.Command("umount", "-l", dir).Run()
		t.Skipf("skipped: cannot remount %s read-only (%v: %s)", dir, err, strings.TrimSpace(string(out)))
	}
	done := false
	undo = func() {
		if !done {
			done = true
			exec.Command("umount", "-l", dir).Run()
		}
	}
	t.Cleanup(undo)
	return undo
}

// fillDisk writes a filler file in dir until only free bytes are left on
// its file system (never fewer), and returns it.
func fillDisk(t testing.TB, dir string, free int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := int64(st.Bavail) * int64(st.Bsize)
	p := filepath.Join(dir, "filler")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for n := avail - free; n > 0; n -= int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), n)]); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatal(err)
		}
	}
	return p
}
