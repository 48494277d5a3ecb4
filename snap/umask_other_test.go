//go:build !unix

package snap

import "testing"

// setUmask skips the test: a system without a umask has no mask to set.
func setUmask(t *testing.T, mask int) {
	t.Skip("no umask on this system")
}
