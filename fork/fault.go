package fork

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// faultAt is the fault-injection seam. Every file operation Create and Truncate do (open,
// mkdir, create, chmod, write, sync, close, stat, rename, truncate, read-back) first calls
// fault with the operation and its path; when faultAt is set and returns an error, the
// operation fails with it as if the system call had. Only tests set it (fault_test.go sweeps
// a failure over every operation of a run); it is nil otherwise and costs a nil check.
var faultAt func(op, path string) error

func fault(op, path string) error {
	if faultAt == nil {
		return nil
	}
	if err := faultAt(op, path); err != nil {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	return nil
}

// faultOr runs op unless the seam fails it first.
func faultOr(op, path string, do func() error) error {
	if err := fault(op, path); err != nil {
		return err
	}
	return do()
}

func openRW(path string) (*os.File, error) {
	if err := fault("open", path); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_RDWR, 0)
}

func openRO(path string) (*os.File, error) {
	if err := fault("open", path); err != nil {
		return nil, err
	}
	return os.Open(path)
}

// tempPattern names a pending output file: ".<final name>.tmp-<random>". The writer holds an
// flock on it until commit or abort, so a temp file nobody holds is one a killed run left.
func tempPattern(final string) string { return "." + filepath.Base(final) + ".tmp-*" }

// cleanStaleTemps removes the pending files of runs that were killed (SIGKILL, power loss)
// before commit or abort: fork temp files in dir whose flock no process holds. A live
// writer's temp is locked and stays.
func cleanStaleTemps(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		n := de.Name()
		if !de.Type().IsRegular() || !strings.HasPrefix(n, ".") || !isTempSuffix(n) {
			continue
		}
		p := filepath.Join(dir, n)
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			// Still the same file (not replaced since the open)? Then it is ours to remove.
			if a, err1 := f.Stat(); err1 == nil {
				if b, err2 := os.Lstat(p); err2 == nil && os.SameFile(a, b) {
					os.Remove(p)
				}
			}
		}
		f.Close()
	}
}

// isTempSuffix reports whether n ends in ".tmp-" and the digits os.CreateTemp adds.
func isTempSuffix(n string) bool {
	i := strings.LastIndex(n, ".tmp-")
	if i < 0 || i+5 == len(n) {
		return false
	}
	for _, c := range n[i+5:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
