//go:build unix

package snap

import "golang.org/x/sys/unix"

// rawFile is a file opened with raw system calls: an *os.File would try to register each file
// with the runtime's poller and query its flags, calls that thousands of small files feel.
type rawFile int

// openRaw opens name for reading, refusing a symlink and not waiting on a FIFO.
func openRaw(name string) (rawFile, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	return rawFile(fd), err
}

func (f rawFile) close() { unix.Close(int(f)) }

// stat is the open file's metadata as the entry rel.
func (f rawFile) stat(rel string) (Entry, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f), &st); err != nil {
		return Entry{}, err
	}
	return entryFromStat(rel, &st), nil
}

// read reads into b; 0 bytes and no error at the end.
func (f rawFile) read(b []byte) (int, error) {
	for {
		n, err := unix.Read(int(f), b)
		if err != unix.EINTR {
			return n, err
		}
	}
}
