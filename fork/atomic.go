package fork

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// pendingFile is an output file being written under a temporary name in its final directory;
// commit makes it appear whole under its final name, abort removes it.
type pendingFile struct {
	*os.File
	final string
	done  bool
}

// createPending opens a temporary file beside final, with mode perm.
func createPending(final string, perm fs.FileMode) (*pendingFile, error) {
	dir, base := filepath.Split(final)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create temporary file for %s: %w", final, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("set mode of %s: %w", f.Name(), err)
	}
	return &pendingFile{File: f, final: final}, nil
}

// commit fsyncs the file, renames it to its final name (refusing to replace an existing file),
// and fsyncs the directory, so that after a crash either no file or the whole file is there.
func (p *pendingFile) commit() error {
	if err := p.Sync(); err != nil {
		p.abort()
		return fmt.Errorf("sync %s: %w", p.final, err)
	}
	if err := p.File.Close(); err != nil {
		p.abort()
		return fmt.Errorf("close %s: %w", p.final, err)
	}
	// Never clobber: the final name is fresh (a new uuid) or the user's --out, which must not
	// exist. Lstat-then-rename leaves a tiny window; link(2) would close it but is not offered
	// by every filesystem, and the names here are not contended.
	if _, err := os.Lstat(p.final); err == nil {
		p.abort()
		return fmt.Errorf("output %s already exists", p.final)
	} else if !errors.Is(err, fs.ErrNotExist) {
		p.abort()
		return fmt.Errorf("check output %s: %w", p.final, err)
	}
	if err := os.Rename(p.Name(), p.final); err != nil {
		p.abort()
		return fmt.Errorf("rename into %s: %w", p.final, err)
	}
	p.done = true
	return syncDir(filepath.Dir(p.final))
}

// abort removes the temporary file; it is a no-op after commit.
func (p *pendingFile) abort() {
	if p.done {
		return
	}
	p.done = true
	p.File.Close()
	os.Remove(p.Name())
}

// syncDir fsyncs a directory so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
