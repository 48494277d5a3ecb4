//go:build !linux

package fork

import "os"

// writeLease is Linux's fcntl F_SETLEASE; elsewhere the cut goes without one.
func writeLease(*os.File) (release func()) { return func() {} }
