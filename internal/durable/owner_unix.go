//go:build unix

package durable

import (
	"os"
	"syscall"
)

// keepOwner gives f the owner of the file at path, where the process may (root editing a
// user's settings); otherwise, or when there is no file, f keeps ours.
func keepOwner(f *os.File, path string) {
	st, err := os.Stat(path)
	if err != nil {
		return
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		f.Chown(int(s.Uid), int(s.Gid))
	}
}
