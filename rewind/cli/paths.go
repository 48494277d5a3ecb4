package cli

import (
	"path/filepath"
	"slices"
	"strings"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
	"rewind.dev/snap/pathspec"
)

// pathTaker is a command that takes paths after "--" (restore, diff): the
// "--" reaches its Exec among the arguments (permute), and splitPaths
// separates them.
type pathTaker interface{ takesPaths() }

// splitPaths cuts a command's arguments at "--": the names before it, the
// paths after it (nil when there is no "--").
func splitPaths(args []string) (names, paths []string, err error) {
	i := slices.Index(args, "--")
	if i < 0 {
		return args, nil, nil
	}
	if i == len(args)-1 {
		return nil, nil, cmdline.Usagef("no paths after --: name files or folders (git's pathspecs), or leave out the --")
	}
	return args[:i], args[i+1:], nil
}

// pathspec reads paths given on the command line as git's pathspecs: relative
// to the current folder (-C DIR's, when given) when it is inside the project,
// else to the project's root; ":/PATH" is always from the root, and an
// absolute path names itself, from every folder (refused outside the
// project).
func (c *common) pathspec(s *store.Store, items []string) (*pathspec.Pathspec, error) {
	if items == nil {
		return nil, nil
	}
	base := c.project
	if base == "" {
		wd, _, err := currentDir() // (the path it had, when a restore removed it)
		if err != nil {
			return nil, err
		}
		base = wd
	}
	cwd := ""
	if abs, err := filepath.Abs(base); err == nil {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		if rel, err := filepath.Rel(s.Project, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			cwd = filepath.ToSlash(rel)
		}
	}
	ps, err := pathspec.Parse(items, pathspec.Options{Cwd: cwd, Root: s.Project})
	if err != nil {
		return nil, &cmdline.Error{Err: err, Code: cmdline.ExitUsage}
	}
	return ps, nil
}
