package fork

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// writeLease takes a write lease on f (fcntl F_SETLEASE) and returns its release. While it is
// held, another process's open(2) of the file waits (the kernel tells the holder with SIGIO,
// which Go ignores); the kernel breaks a lease held past /proc/sys/fs/lease-break-time. An
// agent holds the file open only while it appends, so a lease refused for that (EAGAIN) is
// tried again for up to leaseWait. It does nothing when the lease cannot be had: the file
// stays open elsewhere, another user owns it, or the file system has no leases.
func writeLease(f *os.File) (release func()) {
	fd := f.Fd()
	deadline := time.Now().Add(leaseWait)
	for {
		_, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETLEASE, syscall.F_WRLCK)
		if e == 0 {
			return func() { syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETLEASE, syscall.F_UNLCK) }
		}
		if !errors.Is(e, syscall.EAGAIN) || time.Now().After(deadline) {
			return func() {}
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// leaseWait bounds how long Truncate waits for the agent to close the transcript.
const leaseWait = 500 * time.Millisecond
