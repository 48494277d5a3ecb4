package cli

import (
	"os"
	"strconv"
)

// isTerminal reports whether w is a terminal (on Unix a character device that answers the
// terminal ioctl: /dev/null does not; on Windows a console).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && terminal(f.Fd())
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
	return columns(f.Fd())
}
