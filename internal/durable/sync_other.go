//go:build !darwin

package durable

import "os"

func syncFile(f *os.File) error { return f.Sync() }
