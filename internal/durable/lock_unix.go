//go:build unix

package durable

import (
	"os"
	"syscall"
)

// lock takes an flock on a temporary file, held until the file is closed.
func lock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// removeIfUnheld removes the temporary file at p when no process holds its flock, and it is
// still the file that was locked (not one a new writer put there since).
func removeIfUnheld(p string) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if lock(f) != nil {
		return // a live writer holds it
	}
	if sameFile(f, p) {
		os.Remove(p)
	}
}
