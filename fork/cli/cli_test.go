package cli

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"rewind.dev/internal/fixtures"
	jsonlcli "rewind.dev/jsonl/cli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rewind-fork": func() {
			os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"rewind-jsonl": func() {
			os.Exit(jsonlcli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs testdata/script/*.txtar: the CLI's behaviour and the pipelines with
// rewind-jsonl. $FIXTURES names the real transcripts in internal/fixtures.
func TestScripts(t *testing.T) {
	fixtureDir := fixtures.Dir()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtureDir)
			return nil
		},
	})
}
