package durable

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tempInfix marks the temporary files Create makes: ".<base>.rewind-tmp-<digits>". The name
// says the file is Rewind's, since the sweep runs in folders that are not (an agent's sessions,
// the user's settings): another program's temporary files are never taken for ours.
const tempInfix = ".rewind-tmp-"

// IsTemp reports whether base is the name of a temporary file Create makes.
func IsTemp(base string) bool {
	i := strings.LastIndex(base, tempInfix)
	if i < 1 || !strings.HasPrefix(base, ".") || i+len(tempInfix) == len(base) {
		return false
	}
	for _, c := range base[i+len(tempInfix):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Sweep removes from dir the temporary files of writes that were killed (SIGKILL, power loss)
// before Commit or Abort. A writer holds a lock (TryLock) on its temporary file from its
// creation until it is renamed or removed, so a temporary file whose lock nobody holds is a dead
// one; a live writer's is locked and stays. (Age cannot tell them apart: a fork of a large
// transcript to a slow disk writes for minutes.) Where the system has no file locks (neither
// Unix nor Windows) nothing is removed. Create sweeps the folder it writes in; a caller may
// sweep a folder it owns at start-up.
func Sweep(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		if de.Type().IsRegular() && IsTemp(de.Name()) {
			removeIfUnheld(filepath.Join(dir, de.Name()))
		}
	}
}

// sameFile reports whether path still names the open file f.
func sameFile(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// makeTemp makes a file in dir under a new name from pattern (its "*" replaced by digits, as
// os.CreateTemp does) with mk, which fails with an error matching fs.ErrExist when the name is
// taken, and opens it for reading and writing: for a temporary file made otherwise than by
// creating it (a clone, a link).
func makeTemp(dir, pattern string, mk func(name string) error) (*os.File, error) {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for range 10000 {
		p := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		if err := mk(p); errors.Is(err, fs.ErrExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // another run's sweep took it before it was locked
		}
		if err != nil {
			os.Remove(p)
			return nil, err
		}
		return f, nil
	}
	return nil, &fs.PathError{Op: "create", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}
