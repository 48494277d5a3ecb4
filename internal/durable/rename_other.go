//go:build !windows

package durable

// openFilesMove: a file may be renamed or removed while it is open, so Commit renames the
// temporary file while it still holds its lock.
const openFilesMove = true
