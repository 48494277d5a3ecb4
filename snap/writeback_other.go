//go:build !linux

package snap

// hasWriteback is false: macOS, the BSDs and Windows have no call that starts writing a range
// of a file without waiting for it, so the archive's sync does it all.
const hasWriteback = false

func startWriteback(uintptr, int64, int64) {}
