package snap

import "golang.org/x/sys/unix"

const hasWriteback = true

// startWriteback asks Linux to start writing n bytes at off to disk, without waiting
// (sync_file_range SYNC_FILE_RANGE_WRITE).
func startWriteback(fd uintptr, off, n int64) {
	unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
