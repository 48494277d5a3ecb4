package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

// A restore deletes what the checkpoint lacks, and that may be the folder
// a shell stands in: the next command there (undo-restore, above all)
// cannot learn where it is from the system, which names no path for a
// folder that is gone. The shell still says where it was ($PWD): the
// nearest folder that exists on that path (the folder itself, when it was
// made again) is where the project is looked for, and the command works on
// that project only when it has a store and the path lies inside it — a
// project Rewind works on, so that undo-restore brings the folder back.
// Otherwise it says what to do.

// GoneError is the current folder, gone, where Rewind will not work from
// the path it had (Dir, "" when unknown): no project with a store holds
// it, or the command makes something there (init, import). Project is the
// project that holds it, when known.
type GoneError struct {
	Dir     string
	Project string
}

func (e *GoneError) Error() string {
	if e.Dir == "" {
		return "the current folder no longer exists (a restore may have removed it)"
	}
	return fmt.Sprintf("the current folder %s no longer exists (a restore may have removed it)", e.Dir)
}

// hint says what to do about it.
func (e *GoneError) hint() string {
	if e.Project != "" {
		return fmt.Sprintf("cd to the project (%s) and run it again, or name it with -C DIR", cmdline.ShellQuote(e.Project))
	}
	return "cd to the project and run it again, or name it with -C DIR"
}

// currentDir is the current folder (absolute). When it is gone, it is the
// path $PWD names, and project is the project with a store that path lay
// in (see above); otherwise a *GoneError.
func currentDir() (dir, project string, err error) {
	wd, err := os.Getwd()
	if err == nil {
		return wd, "", nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	pwd := os.Getenv("PWD")
	if !filepath.IsAbs(pwd) {
		return "", "", &GoneError{}
	}
	pwd = filepath.Clean(pwd)
	up, tail := pwd, "" // (up is pwd itself when the folder was made again: undo-restore did)
	for {
		if fi, err := os.Stat(up); err == nil && fi.IsDir() {
			break
		}
		parent := filepath.Dir(up)
		if parent == up {
			return "", "", &GoneError{Dir: pwd}
		}
		up, tail = parent, filepath.Join(filepath.Base(up), tail)
	}
	if r, err := filepath.EvalSymlinks(up); err == nil {
		up = r
	}
	root, err := store.FindProject(up)
	if err != nil {
		return "", "", &GoneError{Dir: pwd}
	}
	dir = filepath.Join(up, tail)
	if _, _, ok := layout.FindStore(layout.UserHome(), root); !ok {
		return "", "", &GoneError{Dir: pwd}
	}
	if rel, err := filepath.Rel(root, dir); err != nil || !filepath.IsLocal(rel) {
		return "", "", &GoneError{Dir: pwd}
	}
	return dir, root, nil
}
