package durable

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// errNoClone is a clone the file system cannot make (another volume, or no shared blocks):
// Copy then copies the bytes.
var errNoClone = errors.New("the file system cannot clone this file")

// Copy writes a copy of src, a regular file opened at its start, to name durably, with mode
// perm (see Create for flags; not Staged). On macOS the copy is an APFS clone (fclonefileat,
// copy_darwin.go): it shares src's blocks until either file changes, in the time of a metadata
// update whatever the size. Where no clone can be made (another volume, a file system without
// clones), and on other systems, the bytes are copied: io.Copy, which on Linux is
// copy_file_range(2), a reflink where the file system shares extents.
func Copy(name string, perm fs.FileMode, src *os.File, flags ...Flag) error {
	var fl Flag
	for _, f := range flags {
		fl |= f
	}
	if canClone && fl&Staged == 0 {
		f, err := createTemp(name, perm, fl, func(dir, pattern string) (*os.File, error) {
			return cloneTemp(src, dir, pattern)
		})
		if err == nil {
			return f.Commit()
		}
		if !errors.Is(err, errNoClone) {
			return err
		}
	}
	return Write(name, perm, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	}, flags...)
}
