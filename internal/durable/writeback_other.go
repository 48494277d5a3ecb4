//go:build !linux

package durable

// HasWriteback is false: macOS, the BSDs and Windows have no call that starts writing a range
// of a file without waiting for it, so the file's sync does it all.
const HasWriteback = false

// StartWriteback does nothing here (see HasWriteback).
func StartWriteback(uintptr, int64, int64) {}
