package durable

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

const haveLocks = true

// Windows locks are mandatory: no other process may read a locked byte. The lock therefore
// covers one byte far past any file's end, so that what the file holds (the store lock's
// holder line) stays readable to those who wait.
const lockOffsetHigh = 0x7fffffff

func tryLock(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return ErrLocked
	}
	return err
}

func unlock(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// openNoFollow opens p, which Sweep saw as a regular file. os.Open would follow a symlink put
// there since, but sameFile then compares its target with the link, and nothing is removed.
func openNoFollow(p string) (*os.File, error) { return os.Open(p) }
