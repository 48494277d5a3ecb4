// Package cli is the rewind-jsonl command, importable so that tests (and the porcelain's tests)
// run it in-process.
//
//	rewind-jsonl cursor FILE [--agent A] [--count-lines]
//	rewind-jsonl verify FILE < cursor.json
//	rewind-jsonl turns FILE [--last N] [--agent A]
//	rewind-jsonl back N FILE [--agent A]
//	rewind-jsonl at --event ID FILE [--agent A]
//	rewind-jsonl detect FILE
//
// stdout carries one JSON object per line with a "type" field; stderr carries errors only, with
// a hint where one helps (hints.go). Exit status: 0 ok, 1 failure, 2 usage, 3 verify: the file
// does not extend the cursor, 4 fewer prompts than asked for / event id not found,
// 130 interrupted.
package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
)

const name = "rewind-jsonl"

// Exit codes beyond the shared ones (rewind-jsonl(1)).
const (
	exitNotExtends = 3
	exitNotFound   = 4
)

var tool = &cmdline.Tool{Name: name, Hint: hint, Code: code}

// env is what every subcommand writes to.
type env struct {
	stdin  io.Reader
	stdout io.Writer
}

// emit writes v as one JSON line on stdout.
func (e *env) emit(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// Main runs rewind-jsonl with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return tool.Run(ctx, commands(&env{stdin: stdin, stdout: stdout}), args, stdout, stderr)
}

// Commands is the command tree Main runs, for what reads it without running it: rewind's
// shell completions and the test that holds the man page to the flags.
func Commands() *ffcli.Command {
	return commands(&env{stdin: strings.NewReader(""), stdout: io.Discard})
}

func commands(e *env) *ffcli.Command {
	return &ffcli.Command{
		Name:       name,
		ShortUsage: name + " <command> [flags] FILE",
		ShortHelp:  "read agent transcripts: cursors, turns from the tail, cut offsets",
		LongHelp: strings.TrimSpace(`
Transcripts of ` + strings.Join(jsonl.DialectNames(), ", ") + ` are read robustly: no line
length limit, a last line without a newline is incomplete, blank and non-JSON lines are
skipped. A file that does not exist is an empty transcript. Output is JSON on stdout.

Exit status: 0 ok, 1 failure, 2 usage, 3 verify: does not extend, 4 fewer prompts than asked
for or event id not found, 130 interrupted. See rewind-jsonl(1).`),
		Subcommands: []*ffcli.Command{
			newCursorCmd(e), newVerifyCmd(e), newTurnsCmd(e), newBackCmd(e), newAtCmd(e), newDetectCmd(e),
		},
	}
}

// subcommand is what each subcommand's Config provides.
type subcommand interface {
	RegisterFlags(fs *flag.FlagSet)
	Exec(ctx context.Context, args []string) error
}

// newSub builds a subcommand whose flags may also follow the positional arguments
// (rewind-jsonl turns FILE --last 3). args is what follows "rewind-jsonl <cmdName> ".
func newSub(cmdName, args, shortHelp, longHelp string, c subcommand) *ffcli.Command {
	return tool.Command(cmdline.Command{Name: cmdName, Args: args, Help: shortHelp, LongHelp: longHelp,
		Flags: c.RegisterFlags, Positional: true, Exec: c.Exec})
}

// usage is a usage error of cmd, with a hint to read its help.
func usage(cmd string, err error) error {
	return cmdline.WithHint(&cmdline.Error{Err: err, Code: cmdline.ExitUsage}, "run '"+name+" "+cmd+" --help'")
}

// agentFlag is the --agent flag shared by the subcommands.
type agentFlag struct{ name string }

func (a *agentFlag) register(fs *flag.FlagSet) {
	cmdline.ChoiceVar(fs, &a.name, "agent", "", jsonl.DialectNames(), "the `AGENT` that wrote FILE: "+strings.Join(jsonl.DialectNames(), ", ")+" (default: detect from content and path)")
}

// open opens the transcript with the --agent dialect, or detection.
func (a *agentFlag) open(path string) (*jsonl.Transcript, error) {
	var d *jsonl.Dialect
	if a.name != "" {
		var err error
		if d, err = jsonl.LookupDialect(a.name); err != nil {
			return nil, &cmdline.Error{Err: err, Code: cmdline.ExitUsage} // a bad --agent
		}
	}
	return jsonl.Open(path, d)
}

// onePath checks that exactly one FILE was given.
func onePath(cmd string, args []string) (string, error) {
	switch len(args) {
	case 1:
		if args[0] == "" {
			return "", usage(cmd, fmt.Errorf("FILE is empty"))
		}
		return args[0], nil
	case 0:
		return "", usage(cmd, fmt.Errorf("missing FILE (the transcript)"))
	}
	return "", usage(cmd, fmt.Errorf("too many arguments: %s", strings.Join(args[1:], " ")))
}
