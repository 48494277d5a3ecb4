package snap

import (
	"os"

	"golang.org/x/sys/unix"
)

const canWillNeed = true

// willNeed asks the kernel to read f's pages into its cache, without
// waiting for them.
func willNeed(f *os.File) {
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_WILLNEED)
}
