//go:build unix

package hookd

import (
	"os"
	"syscall"
)

// lockTemp holds an flock on a temp file until it is closed.
func lockTemp(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// removeIfUnheld removes the temp file at p when no process holds its flock.
func removeIfUnheld(p string) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // a live writer holds it
	}
	if a, err1 := f.Stat(); err1 == nil {
		if b, err2 := os.Lstat(p); err2 == nil && os.SameFile(a, b) {
			os.Remove(p)
		}
	}
}
