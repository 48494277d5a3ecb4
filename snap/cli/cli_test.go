package cli

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rewind-snap": func() { os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			// Keep the developer's git configuration out of ignore decisions.
			e.Setenv("HOME", e.WorkDir+"/home")
			e.Setenv("XDG_CONFIG_HOME", e.WorkDir+"/home/.config")
			return nil
		},
	})
}
