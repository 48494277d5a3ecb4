package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

const canClone = true

// cloneTemp clones src into a new file in dir named from pattern (its "*" replaced by digits,
// as os.CreateTemp does), opened for reading and writing. The clone gets no owner of src's
// (CLONE_NOOWNERCOPY: it is ours, as a created file is); createTemp then sets its mode. When
// the file system cannot clone (EXDEV, ENOTSUP), the error wraps errNoClone.
func cloneTemp(src *os.File, dir, pattern string) (*os.File, error) {
	rc, err := src.SyscallConn()
	if err != nil {
		return nil, err
	}
	return makeTemp(dir, pattern, func(p string) error {
		var cerr error
		if err := rc.Control(func(fd uintptr) {
			cerr = unix.Fclonefileat(int(fd), unix.AT_FDCWD, p, unix.CLONE_NOFOLLOW|unix.CLONE_NOOWNERCOPY)
		}); err != nil {
			return err
		}
		switch {
		case errors.Is(cerr, unix.EEXIST):
			return fs.ErrExist
		case errors.Is(cerr, unix.EXDEV), errors.Is(cerr, unix.ENOTSUP), errors.Is(cerr, unix.EOPNOTSUPP):
			return fmt.Errorf("clone %s: %w (%w)", src.Name(), errNoClone, cerr)
		case cerr != nil:
			return &fs.PathError{Op: "clone", Path: p, Err: cerr}
		}
		return nil
	})
}
