//go:build !darwin

package durable

import "os"

// canClone is false: Copy copies the bytes (on Linux with copy_file_range, which reflinks on
// its own where it can).
const canClone = false

func cloneTemp(*os.File, string, string) (*os.File, error) { return nil, errNoClone }
