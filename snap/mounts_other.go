//go:build !linux && !darwin && !freebsd

package snap

// systemMounts lists no mounts: this system's list is not read, and a
// restore stages everything at the root, as it did before it knew of
// mounts (a rename into a file system mounted in the tree then fails, and
// the restore says it stopped).
func systemMounts(real string) []mount { return nil }
