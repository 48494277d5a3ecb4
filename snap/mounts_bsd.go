//go:build darwin || freebsd

package snap

import (
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// systemMounts lists the mounts below the folder real (a path with its
// symlinks resolved) as the system tells them (getfsstat), each only where
// it is seen from real: on a device of its own, not the folder above's.
func systemMounts(real string) []mount {
	n, err := unix.Getfsstat(nil, unix.MNT_NOWAIT)
	if err != nil || n <= 0 {
		return nil
	}
	buf := make([]unix.Statfs_t, n+8) // (a few more, mounted meanwhile)
	n, err = unix.Getfsstat(buf, unix.MNT_NOWAIT)
	if err != nil {
		return nil
	}
	var out []mount
	for i := range buf[:n] {
		s := &buf[i]
		rel, ok := relUnder(real, unix.ByteSliceToString(s.Mntonname[:]))
		if !ok {
			continue
		}
		p := filepath.Join(real, rel)
		if !otherDevice(p, filepath.Dir(p)) {
			continue
		}
		out = append(out, mount{path: filepath.ToSlash(rel), readOnly: uint64(s.Flags)&unix.MNT_RDONLY != 0})
	}
	return out
}

// otherDevice reports whether p lies on another device than the folder dir.
func otherDevice(p, dir string) bool {
	a, err1 := os.Lstat(p)
	b, err2 := os.Lstat(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev != sb.Dev
}
