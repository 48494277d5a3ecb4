package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain runs the tests with HOME, XDG_CONFIG_HOME and REWIND_HOME naming
// an empty folder, and XDG_DATA_HOME unset: nothing reads the developer's
// home (git's and snap's global ignores, say). A test that sets none of them
// runs in homes it was given (project); one that wrote into the folder
// anyway read its home from the environment, and fails the run.
func TestMain(m *testing.M) {
	os.Exit(inEmptyHome(m))
}

func inEmptyHome(m *testing.M) int {
	home, err := os.MkdirTemp("", "rewind-store-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(home)
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("REWIND_HOME", filepath.Join(home, ".rewind"))
	os.Unsetenv("XDG_DATA_HOME")
	code := m.Run()
	if left, _ := os.ReadDir(home); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		fmt.Fprintf(os.Stderr, "a test wrote into the environment's HOME (%s), not its own: %v\n", home, names)
		code = 1
	}
	return code
}
