package durable

import (
	"errors"
	"os"
)

// ErrLocked is TryLock's error when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// TryLock takes an exclusive lock on the open file f without waiting: flock(2) on Unix,
// LockFileEx on Windows (lock_windows.go). It lasts until Unlock, or until f is closed or the
// process ends, so a killed holder never leaves it held. When another process holds it, the
// error is ErrLocked. Where the system has no such lock, it takes none and succeeds.
func TryLock(f *os.File) error { return tryLock(f) }

// Unlock releases TryLock's lock before f is closed.
func Unlock(f *os.File) error { return unlock(f) }

// removeIfUnheld removes the temporary file at p when no process holds its lock, and it is
// still the file that was locked (not one a new writer put there since).
func removeIfUnheld(p string) {
	if !haveLocks {
		return // a live writer's file cannot be told from a dead one's
	}
	f, err := openNoFollow(p)
	if err != nil {
		return
	}
	defer f.Close()
	if TryLock(f) != nil {
		return // a live writer holds it
	}
	if sameFile(f, p) {
		os.Remove(p)
	}
}
