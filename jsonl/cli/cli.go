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
// stdout carries one JSON object per line with a "type" field; stderr carries errors only.
// Exit status: 0 ok, 1 failure, 2 usage, 3 verify: the file does not extend the cursor,
// 4 fewer prompts than asked for / event id not found, 130 interrupted.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/jsonl"
)

// Version is set at build time with -ldflags "-X rewind.dev/jsonl/cli.Version=…"; when empty
// the VCS revision from the build info is used.
var Version string

const name = "rewind-jsonl"

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitNotExtends  = 3
	exitNotFound    = 4
	exitInterrupted = 130
)

// exitError carries an exit code and an optional hint with an error.
type exitError struct {
	code int
	err  error
	hint string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// quietExit ends with a code without printing anything (the JSON on stdout said it).
type quietExit int

func (q quietExit) Error() string { return fmt.Sprintf("exit %d", int(q)) }

// env is what every subcommand writes to.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	usage  *bytes.Buffer // flag package output: shown only for --help
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
	e := &env{stdin: stdin, stdout: stdout, usage: new(bytes.Buffer)}
	root := newRoot(e)
	err := root.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		hint := "run rewind-jsonl --help"
		for _, sub := range root.Subcommands {
			if len(args) > 0 && args[0] == sub.Name {
				hint = "run rewind-jsonl " + sub.Name + " --help"
			}
		}
		err = parseError{unwrapParse(err), hint}
	}
	if err == nil {
		err = root.Run(ctx)
	}
	return report(ctx, err, e, stderr)
}

func report(ctx context.Context, err error, e *env, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		io.Copy(stderr, e.usage)
		return exitOK
	}
	var q quietExit
	if errors.As(err, &q) {
		return int(q)
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		fmt.Fprintf(stderr, "%s: error: interrupted\n", name)
		return exitInterrupted
	}
	code, hint := exitFailure, ""
	var ee *exitError
	if errors.As(err, &ee) {
		code, hint = ee.code, ee.hint
	}
	var pe parseError
	if errors.As(err, &pe) {
		code, hint = exitUsage, pe.hint
	}
	fmt.Fprintf(stderr, "%s: error: %s\n", name, err)
	if hint != "" {
		fmt.Fprintf(stderr, "%s: hint: %s\n", name, hint)
	}
	return code
}

// unwrapParse drops ffcli's "error parsing commandline arguments" wrapper.
func unwrapParse(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// parseError is a flag or argument error, with a hint naming the help to read.
type parseError struct {
	err  error
	hint string
}

func (p parseError) Error() string { return p.err.Error() }
func (p parseError) Unwrap() error { return p.err }

type rootConfig struct {
	env     *env
	version bool
}

func (c *rootConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
}

func (c *rootConfig) Exec(ctx context.Context, args []string) error {
	if c.version {
		_, err := fmt.Fprintf(c.env.stdout, "%s %s\n", name, version())
		return err
	}
	if len(args) == 0 {
		return parseError{errors.New("no command given"), "run rewind-jsonl --help for the commands"}
	}
	return parseError{fmt.Errorf("unknown command %q", args[0]), "run rewind-jsonl --help for the commands"}
}

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				v := s.Value
				if len(v) > 12 {
					v = v[:12]
				}
				return v
			}
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return "devel"
}

func newFlagSet(e *env, cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(e.usage)
	return fs
}

func newRoot(e *env) *ffcli.Command {
	rc := &rootConfig{env: e}
	fs := newFlagSet(e, name)
	rc.RegisterFlags(fs)
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
		FlagSet: fs,
		Exec:    rc.Exec,
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

// newSub builds an ffcli command whose flags may also follow the positional arguments
// (rewind-jsonl turns FILE --last 3): the flag package stops at the first positional, so the
// rest is parsed again by interspersed.
func newSub(e *env, cmdName, shortUsage, shortHelp, longHelp string, c subcommand) *ffcli.Command {
	fs := newFlagSet(e, name+" "+cmdName)
	c.RegisterFlags(fs)
	return &ffcli.Command{
		Name:       cmdName,
		ShortUsage: shortUsage,
		ShortHelp:  shortHelp,
		LongHelp:   longHelp,
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			pos, err := interspersed(fs, args)
			if err != nil {
				if errors.Is(err, flag.ErrHelp) {
					return err
				}
				return parseError{err, fmt.Sprintf("run %s %s --help", name, cmdName)}
			}
			return c.Exec(ctx, pos)
		},
	}
}

// interspersed parses flags found anywhere in args and returns the positional arguments in
// order. Everything after "--" is positional.
func interspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var tail []string
	for i, a := range args {
		if a == "--" {
			args, tail = args[:i], args[i+1:]
			break
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return append(pos, tail...), nil
}

// agentFlag is the --agent flag shared by the subcommands.
type agentFlag struct{ name string }

func (a *agentFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&a.name, "agent", "", "the agent that wrote FILE: "+strings.Join(jsonl.DialectNames(), ", ")+" (default: detect from content and path)")
}

// open opens the transcript with the --agent dialect, or detection.
func (a *agentFlag) open(path string) (*jsonl.Transcript, error) {
	var d *jsonl.Dialect
	if a.name != "" {
		var err error
		if d, err = jsonl.LookupDialect(a.name); err != nil {
			return nil, parseError{err, "pass --agent " + strings.Join(jsonl.DialectNames(), "|")}
		}
	}
	t, err := jsonl.Open(path, d)
	if err != nil {
		return nil, &exitError{code: exitFailure, err: err, hint: "check that the path names a readable transcript file"}
	}
	return t, nil
}

// scanError maps library errors to exit codes and hints.
func scanError(err error) error {
	switch {
	case errors.Is(err, jsonl.ErrUnknownAgent):
		return &exitError{code: exitFailure, err: err, hint: "pass --agent " + strings.Join(jsonl.DialectNames(), "|")}
	case errors.Is(err, jsonl.ErrFewerPrompts):
		return &exitError{code: exitNotFound, err: err, hint: "run rewind-jsonl turns FILE to list the prompts"}
	case errors.Is(err, jsonl.ErrEventNotFound):
		return &exitError{code: exitNotFound, err: err, hint: "the id must be the event id field of a complete line (" + idFields() + ")"}
	case errors.Is(err, jsonl.ErrNoEventIDs):
		return &exitError{code: exitFailure, err: err, hint: "use rewind-jsonl back N for this agent"}
	}
	return err
}

// onePath checks that exactly one FILE was given.
func onePath(cmd string, args []string) (string, error) {
	switch len(args) {
	case 1:
		if args[0] == "" {
			return "", parseError{errors.New("FILE is empty"), "run " + name + " " + cmd + " --help"}
		}
		return args[0], nil
	case 0:
		return "", parseError{errors.New("missing FILE (the transcript)"), "run " + name + " " + cmd + " --help"}
	}
	return "", parseError{fmt.Errorf("too many arguments: %s", strings.Join(args[1:], " ")), "run " + name + " " + cmd + " --help"}
}
