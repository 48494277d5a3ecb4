//go:build unix

package reliability

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSKB is the peak resident memory of the finished process ps, in KiB (0 when unknown).
func peakRSSKB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) / 1024 // bytes there
	}
	return int64(ru.Maxrss)
}
