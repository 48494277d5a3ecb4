//go:build unix && !linux

package snap

import (
	"os"

	"golang.org/x/sys/unix"
)

// readDirNames lists an open folder's entries, without "." and "..", through os.File's
// directory reader on a duplicate of fd (closed again; fd stays open for the lookups that
// follow). On macOS that is readdir(3) over one stream, which a folder changing while it is
// read cannot make list a name twice; x/sys's ReadDirent there emulates getdirentries by
// counting entries to skip, which can.
func readDirNames(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(dup)
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	return f.Readdirnames(-1)
}
