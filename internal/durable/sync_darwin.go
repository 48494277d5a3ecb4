package durable

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncFile asks for F_FULLFSYNC: on macOS fsync(2) only hands the data to the drive, which may keep
// it in its cache across a power cut; F_FULLFSYNC also flushes the drive's cache. A file system
// without it (SMB, some FUSE mounts) refuses with ENOTSUP or EINVAL, and gets fsync(2).
// (os.File.Sync also asks for F_FULLFSYNC, but falls back on ENOTSUP only.)
func syncFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		for {
			_, serr = unix.FcntlInt(fd, unix.F_FULLFSYNC, 0)
			if errors.Is(serr, unix.ENOTSUP) || errors.Is(serr, unix.EINVAL) {
				serr = unix.Fsync(int(fd))
			}
			if !errors.Is(serr, unix.EINTR) {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: serr}
	}
	return nil
}
