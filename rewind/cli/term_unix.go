//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import "golang.org/x/sys/unix"

// terminal reports whether fd answers the terminal ioctl (ioctlReadTermios is the system's
// name for it: term_linux.go, term_bsd.go).
func terminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlReadTermios)
	return err == nil
}

// columns is the terminal's width, 0 when it does not say.
func columns(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
