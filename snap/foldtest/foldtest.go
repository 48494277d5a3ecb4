// Package foldtest mounts, for tests, a file system that compares names as
// macOS's APFS does by default: names that differ only in case, or only in
// Unicode normalisation, are one name, and a file keeps the spelling it was
// created with. It is a FUSE loopback over an ordinary folder: every name
// asked for is mapped to the spelling already on disk under its fold key
// (Unicode case folding of the NFD form, as APFS compares), and a new name
// is created as given.
//
// Like net/http/httptest, it is a library for tests only: no binary of
// Rewind imports it. Linux has no case-insensitive file system to test on
// without root-only kernel features (casefold ext4, vfat); FUSE needs only
// /dev/fuse and the right to mount.
package foldtest

import (
	"testing"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Key is the form every spelling of name shares on the mounted file system:
// the NFD form, case-folded. It is written here again, apart from snap's
// own, so that the file system the tests run on is not the code under test.
func Key(name string) string {
	return norm.NFD.String(cases.Fold().String(norm.NFD.String(name)))
}

// Dir mounts a folding file system over a new temporary folder for the
// test, unmounted when it ends, and returns where it is mounted. Where this
// machine cannot mount one (no /dev/fuse, no right to mount), it skips the
// test and says why.
func Dir(t testing.TB) string {
	t.Helper()
	disk, mnt := t.TempDir(), t.TempDir()
	unmount, err := Mount(disk, mnt)
	if err != nil {
		t.Skipf("no folding file system to test on: %v", err)
	}
	t.Cleanup(func() {
		if err := unmount(); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return mnt
}
