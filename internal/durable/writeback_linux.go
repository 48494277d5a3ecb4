package durable

import "golang.org/x/sys/unix"

// HasWriteback says StartWriteback does something here.
const HasWriteback = true

// StartWriteback asks Linux to start writing n bytes at off of the file fd to disk, without
// waiting (sync_file_range SYNC_FILE_RANGE_WRITE), so that a later sync finds them written: for
// a large file written now and synced later, with other work between.
func StartWriteback(fd uintptr, off, n int64) {
	unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
