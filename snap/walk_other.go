//go:build !unix

package snap

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// dirFD is the path of the folder the walk looks names up in: this system has no folder
// descriptors to look names up by, so a folder replaced while it is walked is read where it is
// now (the walk's other checks still see a changed entry's new kind).
type dirFD = string

// atCWD makes a name a path.
const atCWD = ""

func openDir(abs string) (dirFD, []string, error) {
	f, err := os.Open(abs)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return "", nil, err
	}
	return abs, names, nil
}

func closeDir(dirFD) {}

func lstatAt(at dirFD, name, rel string) (Entry, error) {
	fi, err := os.Lstat(filepath.Join(at, name))
	if err != nil {
		return Entry{}, err
	}
	return entryFromInfo(rel, fi), nil
}

func readlinkat(at dirFD, name string) (string, error) {
	return os.Readlink(filepath.Join(at, name))
}

// openAt opens name in the folder at for reading, refusing a symlink (checked just before
// the open: there is no O_NOFOLLOW here).
func openAt(at dirFD, name string) (*os.File, error) {
	return openNoFollow(filepath.Join(at, name))
}

// changed reports whether err means a path changed under the walk: it is gone, or one of its
// folders, or it is now a symlink.
func changed(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, errSymlink)
}

// denied reports whether err means the walk may not read a path its owner may.
func denied(err error) bool { return errors.Is(err, fs.ErrPermission) }

// ioError is false: the system's read errors are not told apart here, and fail the save.
func ioError(error) bool { return false }
