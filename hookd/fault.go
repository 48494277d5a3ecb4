package hookd

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// faultAt is the fault-injection seam of the settings merge: every file
// operation of a settings or config write (read, mkdir, create, write,
// chmod, sync, rename) first calls fault; when faultAt is set and returns
// an error, the operation fails with it as if the system call had. Only
// tests set it (fault_test.go sweeps a failure over every operation).
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

// faultOr runs do unless the seam fails op first.
func faultOr(op, path string, do func() error) error {
	if err := fault(op, path); err != nil {
		return err
	}
	return do()
}

func readFile(path string) ([]byte, error) {
	if err := fault("read", path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// tempInfix marks writeAtomic's temp files: ".<name>.rewind-tmp-<digits>".
const tempInfix = ".rewind-tmp-"

// isTemp reports whether n is one of writeAtomic's temp file names.
func isTemp(n string) bool {
	i := strings.LastIndex(n, tempInfix)
	if !strings.HasPrefix(n, ".") || i < 0 || i+len(tempInfix) == len(n) {
		return false
	}
	for _, c := range n[i+len(tempInfix):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// cleanStaleTemps removes writeAtomic's temp files in dir that no process
// holds: what a run killed between create and rename left.
func cleanStaleTemps(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		if de.Type().IsRegular() && isTemp(de.Name()) {
			removeIfUnheld(filepath.Join(dir, de.Name()))
		}
	}
}
