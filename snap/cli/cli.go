// Package cli is the rewind-snap command, importable so tests (and the
// rewind porcelain's tests) run it in-process.
//
//	rewind-snap create  --root DIR --out FILE.tar.gz [--manifest FILE] [--parent-manifest FILE | --parent DIR [--full]]
//	rewind-snap restore --root DIR (--from FILE.tar.gz | --manifest FILE) [--dry-run]
//	rewind-snap diff    --root DIR (--from FILE.tar.gz | --manifest FILE)
//	rewind-snap ls      --from FILE.tar.gz
//
// Every command prints JSON on stdout; errors go to stderr as
// "rewind-snap: error: …" with a hint where one helps (hints.go). Exit status: 0 ok,
// 1 failure, 2 usage, 130 interrupted.
package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/internal/cmdline"
)

const name = "rewind-snap"

var tool = &cmdline.Tool{Name: name, Hint: hint}

// Main runs rewind-snap with args (without the program name) and returns
// the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	buf := bufio.NewWriter(stdout) // (a line a change or entry: a write each would be a system call each)
	defer buf.Flush()
	out := json.NewEncoder(buf)
	out.SetEscapeHTML(false)
	env := &env{stdout: stdout, stderr: stderr, out: out, buffered: buf}
	return tool.Run(ctx, commands(env), args, stdout, stderr)
}

// Commands is the command tree Main runs, for what reads it without running it: rewind's
// shell completions and the test that holds the man page to the flags.
func Commands() *ffcli.Command {
	out := json.NewEncoder(io.Discard)
	return commands(&env{stdout: io.Discard, stderr: io.Discard, out: out, buffered: io.Discard})
}

func commands(env *env) *ffcli.Command {
	return &ffcli.Command{
		Name:       name,
		ShortUsage: name + " <create|restore|diff|ls> [flags]",
		ShortHelp:  "snapshot, diff and restore a project tree",
		LongHelp: strings.TrimSpace(`
Snapshots capture what git would not ignore (plus .rewindignore and the
built-in excludes .git, .agent/rewind and the state folders of Rewind and
the agents) as a standard tar.gz, with an
optional manifest that makes diffs and "nothing changed" checks cheap.
Output is JSON on stdout. See rewind-snap(1).`),
		Subcommands: []*ffcli.Command{
			command(env, "create", "--root DIR --out FILE.tar.gz [--manifest FILE] [--parent-manifest FILE | --parent DIR [--full]]", "snapshot a tree (or a layer over a parent)", &createCmd{}),
			command(env, "restore", "--root DIR (--from FILE.tar.gz | --manifest FILE) [--dry-run]", "restore a tree exactly from a snapshot", &restoreCmd{}),
			command(env, "diff", "--root DIR (--from FILE.tar.gz | --manifest FILE)", "list changes between a snapshot and a tree", &diffCmd{}),
			command(env, "ls", "--from FILE.tar.gz", "list the entries of a snapshot", &lsCmd{}),
		},
	}
}

type env struct {
	stdout, stderr io.Writer
	out            *json.Encoder // on buffered, a value a line
	buffered       io.Writer     // stdout, buffered
}

// runner is one subcommand's configuration.
type runner interface {
	RegisterFlags(fs *flag.FlagSet)
	Exec(ctx context.Context, e *env, args []string) error
}

func command(e *env, sub, usage, help string, r runner) *ffcli.Command {
	return tool.Command(cmdline.Command{Name: sub, Args: usage, Help: help, Flags: r.RegisterFlags,
		Exec: func(ctx context.Context, args []string) error { return r.Exec(ctx, e, args) }})
}

func need(flagName, value, sub string) error {
	if value == "" {
		return cmdline.WithHint(cmdline.Usagef("%s needs --%s", sub, flagName), "run '"+name+" "+sub+" --help'")
	}
	return nil
}
