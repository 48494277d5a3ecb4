package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
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
// rewind-jsonl. $FIXTURES names the real transcripts in ../testdata/fixtures.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("../testdata/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fixtures); err != nil {
		t.Fatalf("fixtures: %v (the module's testdata/fixtures)", err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			return nil
		},
	})
}
