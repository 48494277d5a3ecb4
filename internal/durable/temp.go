package durable

import (
	"os"
	"path/filepath"
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
