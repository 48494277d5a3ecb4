package cli

import "golang.org/x/sys/windows"

// terminal reports whether fd is a console.
func terminal(fd uintptr) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(fd), &mode) == nil
}

// columns is the console window's width, 0 when it does not say.
func columns(fd uintptr) int {
	var info windows.ConsoleScreenBufferInfo
	if err := windows.GetConsoleScreenBufferInfo(windows.Handle(fd), &info); err != nil {
		return 0
	}
	return max(int(info.Window.Right-info.Window.Left)+1, 0)
}
