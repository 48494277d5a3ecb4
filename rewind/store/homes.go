package store

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"rewind.dev/internal/layout"
)

// Homes are the folders outside its project that a store reads and writes.
// A store takes them from here, never from the process's environment: the
// constructors the CLI uses (Open, Init, Attach, Trust) read the
// environment once (EnvHomes), and the Homes methods of the same names take
// them as given: two stores in one process may live in two homes (tests
// running in parallel, each in a home of its own).
type Homes struct {
	// Rewind is Rewind's own folder (layout.Home): the registry of the
	// stores it made, global storage, the project index, the global config.
	Rewind string
	// User is the user's home folder, "" when there is none: a project may
	// not be it (TooBroad).
	User string
	// Exports is the user's folder for the exports of checkpoints taken
	// inside a project: on macOS ~/Library/Application Support/rewind/exports;
	// elsewhere $XDG_DATA_HOME/rewind/exports, or ~/.local/share/rewind/exports
	// when that is unset (or not an absolute path, as the XDG spec has it).
	// "" when there is no home folder.
	Exports string
}

// EnvHomes are the homes the environment names: $HOME, $REWIND_HOME (see
// layout.Home) and $XDG_DATA_HOME.
func EnvHomes() Homes {
	user, _ := os.UserHomeDir()
	h := Homes{Rewind: layout.Home(user), User: user}
	if user != "" {
		h.Exports = exportsIn(user, os.Getenv("XDG_DATA_HOME"))
	}
	return h
}

// exportsIn is the exports folder of the user whose home folder is home,
// with xdg as $XDG_DATA_HOME.
func exportsIn(home, xdg string) string {
	data := filepath.Join(home, ".local", "share")
	switch {
	case runtime.GOOS == "darwin":
		data = filepath.Join(home, "Library", "Application Support")
	case filepath.IsAbs(xdg):
		data = xdg
	}
	return filepath.Join(data, "rewind", "exports")
}

// exportsDir is h's exports folder, or why there is none.
func (h Homes) exportsDir() (string, error) {
	if h.Exports == "" {
		return "", fmt.Errorf("exports folder: no home folder")
	}
	return h.Exports, nil
}
