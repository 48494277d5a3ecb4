package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// linkTemp links src into dir under a name from pattern (its "*" replaced
// by digits, as os.CreateTemp does), opened for reading and writing. Where
// no link can be made (another file system, one without hard links), the
// error wraps errNoClone.
func linkTemp(src, dir, pattern string) (*os.File, error) {
	fi, err := os.Lstat(src)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("adopt %s: not a regular file", src)
	}
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for range 10000 {
		p := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		err := os.Link(src, p)
		switch {
		case errors.Is(err, fs.ErrExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("link %s: %w (%w)", src, errNoClone, err)
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
	return nil, &fs.PathError{Op: "link", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}
