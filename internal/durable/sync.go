package durable

import "os"

// Sync makes what was written to f, and its metadata, durable: every sync Rewind makes for
// durability (a file before its rename, a folder after it, a truncated transcript, an appended
// index) goes through it. It is fsync(2), except on macOS (sync_darwin.go).
func Sync(f *os.File) error { return syncFile(f) }
