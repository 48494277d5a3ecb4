package snap

import (
	"os"
	"path/filepath"
)

// AtomicFile is an output file that appears under its name only when
// committed: it is written to a temporary name in the same folder, synced,
// renamed into place, and the folder synced, so a crash leaves either the old
// file or the new one, never a part.
type AtomicFile struct {
	*os.File
	name string
	done bool
}

// CreateAtomic starts an atomic write of name; call Commit or Abort.
func CreateAtomic(name string, perm os.FileMode) (*AtomicFile, error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &AtomicFile{File: f, name: name}, nil
}

// Commit makes the file visible under its name.
func (f *AtomicFile) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.File.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.File.Name())
		return err
	}
	if err := os.Rename(f.File.Name(), f.name); err != nil {
		os.Remove(f.File.Name())
		return err
	}
	return syncDir(filepath.Dir(f.name))
}

// Abort removes the temporary file; it is a no-op after Commit.
func (f *AtomicFile) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.File.Name())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteFileAtomic writes data to name atomically.
func WriteFileAtomic(name string, data []byte, perm os.FileMode) error {
	f, err := CreateAtomic(name, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}
