//go:build !unix

package fileid

import "io/fs"

// Inode is 0: the system keeps no inode number in fs.FileInfo.
func Inode(fs.FileInfo) uint64 { return 0 }

// Links is 1: the system's fs.FileInfo does not count hard links.
func Links(fs.FileInfo) uint64 { return 1 }

// ChangeTime is 0: the system keeps no inode change time.
func ChangeTime(fs.FileInfo) int64 { return 0 }

// Owner is unknown: the system's fs.FileInfo names no owner.
func Owner(fs.FileInfo) (uid int, ok bool) { return 0, false }

// Mine is true: without owners in fs.FileInfo, every file counts as the user's.
func Mine(fs.FileInfo) bool { return true }
