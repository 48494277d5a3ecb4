//go:build !unix

package hookd

import "os"

// Without flock a live writer's temp file cannot be told from a dead one's:
// leave them all.
func lockTemp(*os.File)     {}
func removeIfUnheld(string) {}
