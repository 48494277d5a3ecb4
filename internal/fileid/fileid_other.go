//go:build !unix

package fileid

import "io/fs"

// Inode is 0: the system keeps no inode number in fs.FileInfo.
func Inode(fs.FileInfo) uint64 { return 0 }

// Links is 1: the system's fs.FileInfo does not count hard links.
func Links(fs.FileInfo) uint64 { return 1 }

// ChangeTime is 0: the system keeps no inode change time.
func ChangeTime(fs.FileInfo) int64 { return 0 }
