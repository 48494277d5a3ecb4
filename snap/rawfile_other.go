//go:build !unix

package snap

import (
	"io"
	"os"
)

// rawFile is an open file; see rawfile_unix.go.
type rawFile struct{ f *os.File }

func openRaw(name string) (rawFile, error) {
	f, err := openNoFollow(name)
	return rawFile{f}, err
}

func (f rawFile) close() { f.f.Close() }

func (f rawFile) stat(rel string) (Entry, error) {
	fi, err := f.f.Stat()
	if err != nil {
		return Entry{}, err
	}
	return entryFromInfo(rel, fi), nil
}

func (f rawFile) read(b []byte) (int, error) {
	n, err := f.f.Read(b)
	if err == io.EOF {
		return n, nil
	}
	return n, err
}
