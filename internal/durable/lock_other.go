//go:build !unix && !windows

package durable

import "os"

// Without file locks a live writer's temporary file cannot be told from a dead one's: none is
// locked, and the sweep leaves them all.
const haveLocks = false

func tryLock(*os.File) error                { return nil }
func unlock(*os.File) error                 { return nil }
func openNoFollow(string) (*os.File, error) { return nil, os.ErrInvalid }
