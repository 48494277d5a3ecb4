//go:build !unix

package snap

import (
	"errors"
	"io/fs"
	"os"
)

// oNonblock is 0: there are no FIFOs in the tree to block an open here.
const oNonblock = 0

// errSymlink is a symlink found where a file was to be read: the file changed.
var errSymlink = errors.New("is a symlink")

// openNoFollow opens the file name for reading, refusing a symlink (checked just before the
// open: there is no O_NOFOLLOW here).
func openNoFollow(name string) (*os.File, error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errSymlink}
	}
	return os.Open(name)
}
