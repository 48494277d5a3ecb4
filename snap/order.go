package snap

import "slices"

// SortEntries puts entries in the order a walk emits them (and a manifest
// lists them): a folder right before its contents, names in byte order. A
// caller that composes a snapshot from others' entries sorts them so.
func SortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int { return comparePaths(a.Path, b.Path) })
}
