package durable

import "io/fs"

// FaultAt is the fault-injection seam. Every file operation of a durable write (create, chmod,
// write, sync, lstat, rename, syncdir), and those that fork and hookd put through Fault of
// their own (open, read, mkdir, append, truncate, remove), first calls Fault with the operation
// and its path; when FaultAt is set and returns an error, the operation fails with it as if the
// system call had. Only tests set it (the fault sweeps of fork and hookd fail every operation
// of a run in turn); it is nil otherwise and costs a nil check.
var FaultAt func(op, path string) error

// Fault returns the error FaultAt gives op on path, as an *fs.PathError; nil when none.
func Fault(op, path string) error {
	if FaultAt == nil {
		return nil
	}
	if err := FaultAt(op, path); err != nil {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	return nil
}

// FaultOr runs do unless the seam fails op first.
func FaultOr(op, path string, do func() error) error {
	if err := Fault(op, path); err != nil {
		return err
	}
	return do()
}
