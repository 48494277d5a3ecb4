// Package durable writes files so that a crash, a full disk or a killed run leaves under the
// name either the old file or the whole new one, never a part: the bytes go to a temporary file
// in the same folder, which is synced, renamed into place, and the folder synced (the sequence
// of google/renameio and litestream). It also holds what every such write shares: the name rule
// for temporary files and the sweep that removes those of killed runs, and the fault seam
// through which the tests fail each file operation in turn.
package durable

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Flag changes how Create writes a file; flags combine with |.
type Flag uint8

const (
	// NoReplace makes Commit refuse to replace a file already at the name (the error wraps
	// fs.ErrExist), and take the new file back when the folder sync after its rename fails,
	// rather than report a failure beside it. For names that are fresh (a new session id, a
	// timestamped backup) or given by the user for a new file. The check is an Lstat just
	// before the rename: link(2) would close the window between them, but not every file
	// system has it, and these names are not contended.
	NoReplace Flag = 1 << iota

	// KeepOwner gives the new file the owner of the file it replaces, where the process may
	// (root editing a user's settings); otherwise, and for a new file, the file is ours.
	KeepOwner

	// NoSync skips both fsyncs: a reader still sees the old file or the whole new one, but
	// after a power cut the name may hold the old file, none, or (on some file systems) an
	// empty or cut one. Only for files whose loss costs nothing and whose readers take damage
	// for absence, written where two fsyncs would be most of the work: the hook's counters
	// (hook-state.json, written by every hook event) and the verify cache.
	NoSync

	// Staged writes the file in place under its own name, which must not exist, syncs it, and
	// leaves the folder to the caller: for a file in a folder that appears whole by a rename of
	// its own (a checkpoint's staging folder), synced once for all its files. Such a file needs
	// no temporary name, and whatever a killed run leaves goes with the folder. It is created
	// with perm as os.OpenFile does (less the umask).
	Staged
)

// File is a file being written durably: under a temporary name in its folder until Commit
// puts it in place (with Staged, under its own name). Its *os.File is the temporary file, for
// callers that seek, read back or copy with the kernel; Write and ReadFrom go through the
// fault seam.
type File struct {
	*os.File
	name  string // the final name
	flags Flag
	done  bool
}

// Create starts writing name with mode perm: it removes the temporary files killed runs left
// in name's folder (see Sweep), then creates ".<base>.rewind-tmp-<digits>" beside name and
// holds a lock on it (TryLock) until Commit or Abort, so that no other run's sweep takes it. Call
// Commit, or Abort (a deferred Abort after Commit does nothing).
func Create(name string, perm fs.FileMode, flags ...Flag) (*File, error) {
	var fl Flag
	for _, f := range flags {
		fl |= f
	}
	if fl&Staged != 0 {
		if err := Fault("create", name); err != nil {
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return nil, err
		}
		return &File{File: f, name: name, flags: fl}, nil
	}
	return createTemp(name, perm, fl, os.CreateTemp)
}

// createTemp is Create without Staged: newTemp makes the temporary file in dir from a pattern,
// as os.CreateTemp does (empty, or a clone: copy.go).
func createTemp(name string, perm fs.FileMode, fl Flag, newTemp func(dir, pattern string) (*os.File, error)) (*File, error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	Sweep(dir)
	for {
		if err := Fault("create", name); err != nil {
			return nil, fmt.Errorf("create temporary file for %s: %w", name, err)
		}
		f, err := newTemp(dir, "."+base+tempInfix+"*")
		if err != nil {
			return nil, fmt.Errorf("create temporary file for %s: %w", name, err)
		}
		if err := TryLock(f); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, fmt.Errorf("lock temporary file for %s: %w", name, err)
		}
		// Another run's sweep may have removed it between create and lock: take a new one.
		if !sameFile(f, f.Name()) {
			f.Close()
			continue
		}
		err = FaultOr("chmod", f.Name(), func() error { return f.Chmod(perm) })
		if err != nil {
			os.Remove(f.Name())
			f.Close()
			return nil, fmt.Errorf("set mode of %s: %w", f.Name(), err)
		}
		if fl&KeepOwner != 0 {
			keepOwner(f, name)
		}
		return &File{File: f, name: name, flags: fl}, nil
	}
}

// Write writes to the file, through the fault seam.
func (f *File) Write(b []byte) (int, error) {
	if err := Fault("write", f.name); err != nil {
		return 0, err
	}
	return f.File.Write(b)
}

// ReadFrom copies r into the file (with the kernel's copy where it can), through the fault
// seam; io.Copy uses it.
func (f *File) ReadFrom(r io.Reader) (int64, error) {
	if err := Fault("write", f.name); err != nil {
		return 0, err
	}
	return f.File.ReadFrom(r)
}

// Commit syncs the file, renames it into place and syncs the folder (as its flags say), so
// that after a crash the name holds the old file or the whole new one. The rename happens
// while the lock is held, so no sweep can take the file away. On any failure before the
// rename the temporary file is removed and the name keeps what it had. When only the folder
// sync fails, the new file is in place and the error says that a crash may undo it (with
// NoReplace the new file is removed again instead).
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("commit %s: %w", f.name, os.ErrClosed)
	}
	if f.flags&NoSync == 0 {
		if err := FaultOr("sync", f.name, func() error { return Sync(f.File) }); err != nil {
			f.Abort()
			return fmt.Errorf("sync %s: %w", f.name, err)
		}
	}
	if f.flags&Staged != 0 {
		f.done = true
		if err := f.File.Close(); err != nil {
			os.Remove(f.name)
			return fmt.Errorf("close %s: %w", f.name, err)
		}
		return nil
	}
	if f.flags&NoReplace != 0 {
		if err := f.refuseExisting(); err != nil {
			f.Abort()
			return err
		}
	}
	if !openFilesMove {
		// Windows renames no open file: close it first. Its lock goes with the close, so
		// another run's sweep may take it for a dead one's; then the rename fails and the
		// name keeps what it had.
		if err := f.File.Close(); err != nil {
			f.done = true
			os.Remove(f.File.Name())
			return fmt.Errorf("close %s: %w", f.File.Name(), err)
		}
	}
	if err := FaultOr("rename", f.name, func() error { return os.Rename(f.File.Name(), f.name) }); err != nil {
		f.Abort()
		return fmt.Errorf("rename into %s: %w", f.name, err)
	}
	f.done = true
	switch {
	case !openFilesMove && f.flags&NoSync != 0:
		return nil // closed above
	case f.flags&NoSync != 0:
		// Unsynced, a write error may show only at close (NFS): then the file in place may
		// lack bytes, and none is better than that.
		if err := f.File.Close(); err != nil {
			os.Remove(f.name)
			return fmt.Errorf("close %s: %w", f.name, err)
		}
		return nil
	case openFilesMove:
		// The data is synced: a failing close cannot lose it, and the file is already in place.
		f.File.Close()
	}
	if err := SyncDir(filepath.Dir(f.name)); err != nil {
		if f.flags&NoReplace != 0 {
			os.Remove(f.name) // not durable: take it back rather than report a failure beside it
			return err
		}
		return fmt.Errorf("%s is written, but a crash may undo it: %w", f.name, err)
	}
	return nil
}

// refuseExisting fails when something is at the final name already.
func (f *File) refuseExisting() error {
	if err := Fault("lstat", f.name); err != nil {
		return fmt.Errorf("check output %s: %w", f.name, err)
	}
	_, err := os.Lstat(f.name)
	if err == nil {
		return &existsError{f.name}
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("check output %s: %w", f.name, err)
	}
	return nil
}

// existsError is NoReplace's refusal; it wraps fs.ErrExist.
type existsError struct{ name string }

func (e *existsError) Error() string { return "output " + e.name + " already exists" }
func (e *existsError) Unwrap() error { return fs.ErrExist }

// Abort removes the temporary file (with Staged, the file); it does nothing after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	if !openFilesMove {
		f.File.Close() // Windows removes no open file (an error after a close before the rename)
		os.Remove(f.File.Name())
		return
	}
	os.Remove(f.File.Name()) // before the close: still locked, so no sweep races it
	f.File.Close()
}

// WriteFile writes data to name durably: Create, Write, Commit.
func WriteFile(name string, data []byte, perm fs.FileMode, flags ...Flag) error {
	return Write(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, flags...)
}

// Write writes to name durably what write writes to the File it is given (an io.Copy into it
// copies with the kernel where it can): Create, write, Commit. When write fails, nothing of it
// is left and the error, wrapped with the name, is write's.
func Write(name string, perm fs.FileMode, write func(io.Writer) error, flags ...Flag) error {
	f, err := Create(name, perm, flags...)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Commit()
}

// SyncDir syncs a folder (Sync), so that a rename, creation or removal in it survives a crash.
func SyncDir(dir string) error {
	if err := Fault("syncdir", dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return syncDir(dir)
}
