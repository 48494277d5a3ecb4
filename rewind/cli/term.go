package cli

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether w is a terminal (a character device that
// answers the terminal ioctl: /dev/null does not).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}

// width is how many columns e.stdout shows: $COLUMNS when set, else the
// terminal's width, else 0 (no limit: a pipe or a file gets whole lines).
func (e *env) width() int {
	if n, err := strconv.Atoi(e.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	f, ok := e.stdout.(*os.File)
	if !ok || !isTerminal(f) {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}
