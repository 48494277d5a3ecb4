//go:build !(linux || darwin)

package foldtest

import (
	"errors"
	"runtime"
)

// Mount fails: go-fuse serves Linux and macOS only, so the tests that need a folding file
// system skip here.
func Mount(dir, mnt string) (unmount func() error, err error) {
	return nil, errors.New("no FUSE on " + runtime.GOOS)
}
