//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package cli

// terminal is false where Rewind knows no way to ask: output is treated as a pipe.
func terminal(uintptr) bool { return false }

func columns(uintptr) int { return 0 }
