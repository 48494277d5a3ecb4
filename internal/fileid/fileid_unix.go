//go:build unix

package fileid

import (
	"io/fs"
	"os"
	"syscall"
)

// Inode is fi's inode number, 0 when fi holds none.
func Inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// Links is how many hard links fi's file has, 1 when fi does not say.
func Links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// ChangeTime is fi's inode change time (ctime) in nanoseconds since the epoch, 0 when fi holds
// none.
func ChangeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return ctime(st)
	}
	return 0
}

// Owner is the user id of fi's owner; ok is false when fi does not say.
func Owner(fi fs.FileInfo) (uid int, ok bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}

// Mine reports whether fi's file belongs to the user the process runs as (its effective
// user), the one whose files Rewind may trust; true when fi does not say.
func Mine(fi fs.FileInfo) bool {
	uid, ok := Owner(fi)
	return !ok || uid == os.Geteuid()
}
