//go:build unix

package snap

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// dirFD is an open folder the walk looks names up in (fstatat, readlinkat, openat): were the
// folder replaced while it is walked, its names are gone, not someone else's.
type dirFD = int

// atCWD makes a name a path (AT_FDCWD).
const atCWD = unix.AT_FDCWD

// openDir opens the folder at abs and lists its names. Raw system calls: an *os.File would
// register the folder with the runtime's poller and switch its mode, several calls per folder
// that a walk of thousands of folders feels.
func openDir(abs string) (dirFD, []string, error) {
	fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, err
	}
	names, err := readDirNames(fd)
	if err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	return fd, names, nil
}

func closeDir(fd dirFD) { unix.Close(fd) }

// lstatAt stats name in the folder at without following a symlink, as the entry rel.
func lstatAt(at dirFD, name, rel string) (Entry, error) {
	var sys unix.Stat_t
	if err := unix.Fstatat(at, name, &sys, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Entry{}, err
	}
	return entryFromStat(rel, &sys), nil
}

func readlinkat(at dirFD, name string) (string, error) {
	for size := 256; ; size *= 2 {
		b := make([]byte, size)
		n, err := unix.Readlinkat(at, name, b)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(b[:n]), nil
		}
	}
}

// openAt opens name in the folder at for reading, refusing a symlink, without blocking on a
// FIFO.
func openAt(at dirFD, name string) (*os.File, error) {
	fd, err := unix.Openat(at, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// changed reports whether err means a path changed under the walk: it is
// gone, or one of its folders, or it is not what it was (a folder, a
// symlink).
func changed(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EINVAL) ||
		errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EISDIR)
}

// denied reports whether err means the walk may not read a path its owner
// may: the checkpoint is taken all the same, and records it unreadable.
func denied(err error) bool {
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// ioError reports whether err is the device's failure to read (EIO).
func ioError(err error) bool { return errors.Is(err, unix.EIO) }

// entryFromStat converts lstat information. Kind is 0 for special files.
func entryFromStat(rel string, st *unix.Stat_t) Entry {
	e := Entry{Path: rel, Mode: fs.FileMode(st.Mode) & fs.ModePerm, MTime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		CTime: st.Ctim.Sec*1e9 + st.Ctim.Nsec, Ino: st.Ino}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		e.Kind = KindFile
		e.Size = st.Size
	case syscall.S_IFDIR:
		e.Kind = KindDir
	case syscall.S_IFLNK:
		e.Kind = KindSymlink
		e.Mode = 0o777
	}
	return e
}
