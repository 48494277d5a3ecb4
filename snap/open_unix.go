//go:build unix

package snap

import (
	"os"
	"syscall"
)

// oNonblock keeps an open of a FIFO put in the tree from waiting for a writer.
const oNonblock = syscall.O_NONBLOCK

// openNoFollow opens the file name for reading, refusing a symlink (ELOOP) and not waiting on
// a FIFO.
func openNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
