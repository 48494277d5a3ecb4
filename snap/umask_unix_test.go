//go:build unix

package snap

import (
	"syscall"
	"testing"
)

// setUmask gives the process the file mode creation mask mask for the
// rest of the test.
func setUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}
