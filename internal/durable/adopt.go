package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Adopt puts the file at src, which its owner hands over (it may remove
// it after, but must not change it), at name durably, with mode perm (see
// Create for flags; not Staged): a hard link where both are on one file
// system, so its bytes are not written again; otherwise a copy (Copy).
func Adopt(name string, perm fs.FileMode, src string, flags ...Flag) error {
	var fl Flag
	for _, f := range flags {
		fl |= f
	}
	if fl&Staged == 0 {
		f, err := createTemp(name, perm, fl, func(dir, pattern string) (*os.File, error) {
			return linkTemp(src, dir, pattern)
		})
		if err == nil {
			return f.Commit()
		}
		if !errors.Is(err, errNoClone) {
			return err
		}
	}
	s, err := os.Open(src)
	if err != nil {
		return err
	}
	defer s.Close()
	return Copy(name, perm, s, flags...)
}

// linkTemp links src into dir under a new name from pattern (see makeTemp). Where no link can
// be made (another file system, one without hard links), the error wraps errNoClone.
func linkTemp(src, dir, pattern string) (*os.File, error) {
	fi, err := os.Lstat(src)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("adopt %s: not a regular file", src)
	}
	return makeTemp(dir, pattern, func(p string) error {
		err := os.Link(src, p)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("link %s: %w (%w)", src, errNoClone, err)
		}
		return err
	})
}
