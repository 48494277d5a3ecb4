package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

const canClone = true

// cloneTemp clones src into a new file in dir named from pattern (its "*" replaced by digits,
// as os.CreateTemp does), opened for reading and writing. The clone gets no owner of src's
// (CLONE_NOOWNERCOPY: it is ours, as a created file is); createTemp then sets its mode. When
// the file system cannot clone (EXDEV, ENOTSUP), the error wraps errNoClone.
func cloneTemp(src *os.File, dir, pattern string) (*os.File, error) {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	rc, err := src.SyscallConn()
	if err != nil {
		return nil, err
	}
	for range 10000 {
		p := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		var cerr error
		if err := rc.Control(func(fd uintptr) {
			cerr = unix.Fclonefileat(int(fd), unix.AT_FDCWD, p, unix.CLONE_NOFOLLOW|unix.CLONE_NOOWNERCOPY)
		}); err != nil {
			return nil, err
		}
		switch {
		case errors.Is(cerr, unix.EEXIST):
			continue
		case errors.Is(cerr, unix.EXDEV), errors.Is(cerr, unix.ENOTSUP), errors.Is(cerr, unix.EOPNOTSUPP):
			return nil, fmt.Errorf("clone %s: %w (%w)", src.Name(), errNoClone, cerr)
		case cerr != nil:
			return nil, &fs.PathError{Op: "clone", Path: p, Err: cerr}
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // another run's sweep took it before it was locked
		}
		if err != nil {
			os.Remove(p)
			return nil, err
		}
		return f, nil
	}
	return nil, &fs.PathError{Op: "clone", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}
