// Package cli is the rewind-snap command, importable so tests (and the
// rewind porcelain's tests) run it in-process.
//
//	rewind-snap create  --root DIR --out FILE.tar.gz [--manifest FILE] [--parent-manifest FILE | --parent DIR [--full]]
//	rewind-snap restore --root DIR (--from FILE.tar.gz | --manifest FILE) [--dry-run]
//	rewind-snap diff    --root DIR (--from FILE.tar.gz | --manifest FILE)
//	rewind-snap ls      --from FILE.tar.gz
//
// Every command prints JSON on stdout; errors go to stderr as
// "rewind-snap: error: …" with a hint where one helps. Exit status: 0 ok,
// 1 failure, 2 usage, 130 interrupted.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// Version is set at build time (-X rewind.dev/snap/cli.Version=…).
var Version string

const name = "rewind-snap"

// usageError is bad command-line input: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// hintError carries a hint for the person at the terminal.
type hintError struct {
	err  error
	hint string
}

func (e hintError) Error() string { return e.err.Error() }
func (e hintError) Unwrap() error { return e.err }

func withHint(err error, hint string) error { return hintError{err, hint} }

// Main runs rewind-snap with args (without the program name) and returns
// the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := json.NewEncoder(stdout)
	out.SetEscapeHTML(false)
	env := &env{stdout: stdout, stderr: stderr, out: out}

	rootFS := flag.NewFlagSet(name, flag.ContinueOnError)
	rootFS.SetOutput(stderr)
	version := rootFS.Bool("version", false, "print the version and exit")
	root := &ffcli.Command{
		Name:       name,
		ShortUsage: name + " <create|restore|diff|ls> [flags]",
		ShortHelp:  "snapshot, diff and restore a project tree",
		LongHelp: strings.TrimSpace(`
Snapshots capture what git would not ignore (plus .rewindignore and the
built-in excludes .git, .agent/rewind and the state folders of Rewind and
the agents) as a standard tar.gz, with an
optional manifest that makes diffs and "nothing changed" checks cheap.
Output is JSON on stdout. See rewind-snap(1).`),
		FlagSet: rootFS,
		Subcommands: []*ffcli.Command{
			command(env, "create", "--root DIR --out FILE.tar.gz [--manifest FILE] [--parent-manifest FILE | --parent DIR [--full]]", "snapshot a tree (or a layer over a parent)", &createCmd{}),
			command(env, "restore", "--root DIR (--from FILE.tar.gz | --manifest FILE) [--dry-run]", "restore a tree exactly from a snapshot", &restoreCmd{}),
			command(env, "diff", "--root DIR (--from FILE.tar.gz | --manifest FILE)", "list changes between a snapshot and a tree", &diffCmd{}),
			command(env, "ls", "--from FILE.tar.gz", "list the entries of a snapshot", &lsCmd{}),
		},
		Exec: func(ctx context.Context, args []string) error {
			if *version {
				fmt.Fprintf(stdout, "%s %s\n", name, versionString())
				return nil
			}
			if len(args) > 0 {
				return usageError{fmt.Sprintf("unknown command %q; run '%s --help'", args[0], name)}
			}
			return flag.ErrHelp
		},
	}
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: error: %v\n", name, err)
		return 2
	}
	err := root.Run(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 2 // ffcli printed the usage
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		// Interrupted (SIGINT, SIGTERM): whatever error the cut-short work
		// returned, the run ends as interrupted.
		fmt.Fprintf(stderr, "%s: interrupted\n", name)
		return 130
	}
	fmt.Fprintf(stderr, "%s: error: %v\n", name, err)
	var h hintError
	if errors.As(err, &h) {
		fmt.Fprintf(stderr, "%s: hint: %s\n", name, h.hint)
	}
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

type env struct {
	stdout, stderr io.Writer
	out            *json.Encoder
}

// runner is one subcommand's configuration.
type runner interface {
	RegisterFlags(fs *flag.FlagSet)
	Exec(ctx context.Context, e *env, args []string) error
}

func command(e *env, sub, usage, help string, r runner) *ffcli.Command {
	fs := flag.NewFlagSet(name+" "+sub, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	r.RegisterFlags(fs)
	return &ffcli.Command{
		Name:       sub,
		ShortUsage: name + " " + sub + " " + usage,
		ShortHelp:  help,
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Sprintf("%s takes no arguments, got %q; run '%s %s --help'", sub, args[0], name, sub)}
			}
			return r.Exec(ctx, e, args)
		},
	}
}

func versionString() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	return "dev"
}

func need(flagName, value, sub string) error {
	if value == "" {
		return usageError{fmt.Sprintf("%s needs --%s; run '%s %s --help'", sub, flagName, name, sub)}
	}
	return nil
}
