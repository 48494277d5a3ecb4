package fork

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// pendingFile is an output file being written under a temporary name in its final directory;
// commit makes it appear whole under its final name, abort removes it.
type pendingFile struct {
	*os.File
	final string
	done  bool
}

// createPending opens a temporary file beside final, with mode perm, and holds an flock on it
// until commit or abort. Temp files that killed runs left in the folder are removed first.
func createPending(final string, perm fs.FileMode) (*pendingFile, error) {
	dir, base := filepath.Split(final)
	if dir == "" {
		dir = "."
	}
	cleanStaleTemps(dir)
	for {
		if err := fault("create", final); err != nil {
			return nil, fmt.Errorf("create temporary file for %s: %w", final, err)
		}
		f, err := os.CreateTemp(dir, tempPattern(base))
		if err != nil {
			return nil, fmt.Errorf("create temporary file for %s: %w", final, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, fmt.Errorf("lock temporary file for %s: %w", final, err)
		}
		// Another run's cleanStaleTemps may have removed it between create and lock: retry.
		if a, err1 := f.Stat(); err1 == nil {
			if b, err2 := os.Lstat(f.Name()); err2 != nil || !os.SameFile(a, b) {
				f.Close()
				continue
			}
		}
		err = fault("chmod", f.Name())
		if err == nil {
			err = f.Chmod(perm)
		}
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, fmt.Errorf("set mode of %s: %w", f.Name(), err)
		}
		return &pendingFile{File: f, final: final}, nil
	}
}

// Write writes to the pending file (through the fault seam).
func (p *pendingFile) Write(b []byte) (int, error) {
	if err := fault("write", p.final); err != nil {
		return 0, err
	}
	return p.File.Write(b)
}

// commit fsyncs the file, renames it to its final name (refusing to replace an existing file),
// and fsyncs the directory, so that after a crash either no file or the whole file is there.
// The rename happens while the flock is still held, so no cleanup can take the file away.
func (p *pendingFile) commit() error {
	err := fault("sync", p.final)
	if err == nil {
		err = p.Sync()
	}
	if err != nil {
		p.abort()
		return fmt.Errorf("sync %s: %w", p.final, err)
	}
	// Never clobber: the final name is fresh (a new uuid) or the user's --out, which must not
	// exist. Lstat-then-rename leaves a tiny window; link(2) would close it but is not offered
	// by every filesystem, and the names here are not contended.
	if err := fault("lstat", p.final); err != nil {
		p.abort()
		return fmt.Errorf("check output %s: %w", p.final, err)
	}
	if _, err := os.Lstat(p.final); err == nil {
		p.abort()
		return fmt.Errorf("output %s already exists", p.final)
	} else if !errors.Is(err, fs.ErrNotExist) {
		p.abort()
		return fmt.Errorf("check output %s: %w", p.final, err)
	}
	err = fault("rename", p.final)
	if err == nil {
		err = os.Rename(p.Name(), p.final)
	}
	if err != nil {
		p.abort()
		return fmt.Errorf("rename into %s: %w", p.final, err)
	}
	p.done = true
	// The data is synced: a failing close cannot lose it, and the file is already in place.
	p.File.Close()
	if err := syncDir(filepath.Dir(p.final)); err != nil {
		os.Remove(p.final) // not durable: take it back rather than report a failure beside it
		return err
	}
	return nil
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
	if err := fault("syncdir", dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
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
