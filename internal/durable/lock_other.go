//go:build !unix

package durable

import "os"

// Without flock a live writer's temporary file cannot be told from a dead one's: none is
// locked, and the sweep leaves them all.
func lock(*os.File) error   { return nil }
func removeIfUnheld(string) {}
