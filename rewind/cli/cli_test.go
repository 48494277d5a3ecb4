package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	forkcli "rewind.dev/fork/cli"
	hookcli "rewind.dev/hookd/cli"
	"rewind.dev/internal/fixtures"
	"rewind.dev/internal/layout"
	jsonlcli "rewind.dev/jsonl/cli"
	"rewind.dev/rewind/store"
	snapcli "rewind.dev/snap/cli"
	"rewind.dev/snap/foldtest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rewind": func() { os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		// The plumbing tools, for what the five share (version.txtar); rewind
		// config --register-hooks runs the rewind-hook beside rewind (config.txtar).
		"rewind-snap":  func() { os.Exit(snapcli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"rewind-jsonl": func() { os.Exit(jsonlcli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"rewind-fork":  func() { os.Exit(forkcli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"rewind-hook":  func() { os.Exit(hookcli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// ownHome gives a test that runs rewind in this process a home of its own: a store
// records itself in the home (~/.rewind/stores), never the real one's.
func ownHome(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("REWIND_HOME", filepath.Join(home, ".rewind"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
}

func TestScripts(t *testing.T) {
	fixtureDir := fixtures.Dir()
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"checkpoint": checkpointCmd, "hostile": hostileCmd},
		Setup: func(e *testscript.Env) error {
			scriptEnv(e, fixtureDir)
			return nil
		},
	})
}

// scriptEnv gives a script a home of its own and the fixtures.
func scriptEnv(e *testscript.Env, fixtures string) {
	e.Setenv("HOME", e.WorkDir+"/home")
	e.Setenv("XDG_CONFIG_HOME", e.WorkDir+"/home/.config")
	e.Setenv("REWIND_HOME", e.WorkDir+"/home/.rewind")
	e.Setenv("FIXTURES", fixtures)
	e.Setenv("NO_COLOR", "1")
	// Under -race every process sleeps a second at exit by default (to let
	// other goroutines report); the scripts start hundreds of them. Races
	// found while they run are reported all the same.
	e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// homeMu serializes checkpointCmd's use of the process's environment.
var homeMu sync.Mutex

// checkpointCmd is the testscript command 'checkpoint VAR CP': it sets $VAR to
// the id of the checkpoint CP of the project in the current folder (any name
// rewind takes: @N, an id or its prefix; or newest, the newest of all, a
// restore backup too), so that scripts name checkpoints without guessing ids
// (the number after the second depends on the clock).
func checkpointCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: checkpoint VAR CP")
	}
	// The store is opened here, in the test's process, as the script's user:
	// with the script's home, which says which stores are its own. Scripts
	// run in parallel, and only this command reads the process's own
	// environment, so it takes turns.
	homeMu.Lock()
	defer homeMu.Unlock()
	for _, k := range []string{"HOME", "REWIND_HOME"} {
		old, had := os.LookupEnv(k)
		os.Setenv(k, ts.Getenv(k))
		if had {
			defer os.Setenv(k, old)
		} else {
			defer os.Unsetenv(k)
		}
	}
	project, err := store.FindProject(ts.MkAbs("."))
	ts.Check(err)
	s, err := store.Open(project)
	ts.Check(err)
	var cp *store.Checkpoint
	if args[1] == "newest" {
		cp, err = s.Newest()
	} else {
		cp, err = s.Resolve(args[1])
	}
	ts.Check(err)
	if cp == nil {
		ts.Fatalf("no checkpoint")
	}
	ts.Setenv(args[0], cp.ID)
}

// TestFolding runs testdata/fold/*.txtar in a folder mounted as a file
// system that folds names as macOS's does ($FOLD); it is skipped where none
// can be mounted.
func TestFolding(t *testing.T) {
	foldtest.Dir(t) // skips here when nothing can be mounted
	fixtureDir := fixtures.Dir()
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/fold",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"checkpoint": checkpointCmd, "hostile": hostileCmd},
		Setup: func(e *testscript.Env) error {
			scriptEnv(e, fixtureDir)
			disk, mnt := filepath.Join(e.WorkDir, ".disk"), filepath.Join(e.WorkDir, "fold")
			for _, d := range []string{disk, mnt} {
				if err := os.Mkdir(d, 0o755); err != nil {
					return err
				}
			}
			unmount, err := foldtest.Mount(disk, mnt)
			if err != nil {
				return err
			}
			e.Defer(func() {
				if err := unmount(); err != nil {
					e.T().Fatal(err)
				}
			})
			e.Setenv("FOLD", mnt)
			return nil
		},
	})
}

// TestSetup runs the repository's set-up scripts (install.sh, scripts/*) as a
// person would, in a fresh home: testdata/setup/*.txtar. install.sh builds
// every binary with the Go running this test, in its build cache.
func TestSetup(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goenv := map[string]string{}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GOSUMDB", "GOTOOLCHAIN"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Skipf("no go to build with: %v", err)
		}
		goenv[k] = strings.TrimSpace(string(out))
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/setup",
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", e.WorkDir+"/home")
			e.Setenv("REPO", repo)
			for k, v := range goenv {
				e.Setenv(k, v)
			}
			return nil
		},
	})
}

// An interrupted command exits 130 and says so, once.
func TestInterrupted(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	if _, _, err := store.Init(dir, layout.ModeProject); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{{"-C", dir, "save"}, {"-C", dir, "save", "--json"}} {
		var stdout, stderr strings.Builder
		code := Main(ctx, args, strings.NewReader(""), &stdout, &stderr)
		want := "rewind: error: interrupted\n"
		if args[len(args)-1] == "--json" {
			want = `{"type":"error","message":"interrupted","exit_code":130}` + "\n"
		}
		if code != 130 || stderr.String() != want {
			t.Errorf("%q: exit %d, stderr %q; want 130, %q", args, code, stderr.String(), want)
		}
	}
}
