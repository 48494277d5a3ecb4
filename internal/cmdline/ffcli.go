package cmdline

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// Command is one subcommand of a tool built on ffcli (the plumbing tools).
type Command struct {
	Name     string
	Args     string // what follows "<tool> <name> " in the usage line
	Help     string // one line, for the tool's list of commands
	LongHelp string
	Flags    func(fs *flag.FlagSet) // registers the command's flags; nil for none
	// Positional: the command takes arguments, and its flags may come before, between or after
	// them (rewind-jsonl turns FILE --last 3); everything after "--" is an argument. Otherwise
	// an argument is a usage error.
	Positional bool
	Exec       func(ctx context.Context, args []string) error
}

// Command builds c as an ffcli subcommand of t, with a flag set of its own.
func (t *Tool) Command(c Command) *ffcli.Command {
	fs := flag.NewFlagSet(t.Name+" "+c.Name, flag.ContinueOnError)
	if c.Flags != nil {
		c.Flags(fs)
	}
	usage := t.Name + " " + c.Name
	if c.Args != "" {
		usage += " " + c.Args
	}
	return &ffcli.Command{
		Name: c.Name, ShortUsage: usage, ShortHelp: c.Help, LongHelp: c.LongHelp, FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			if c.Positional {
				pos, err := interspersed(fs, args)
				if err != nil {
					if errors.Is(err, flag.ErrHelp) {
						return errHelpPrinted // the flag set printed the usage; ffcli would again
					}
					return &FlagError{Command: t.Name + " " + c.Name, Err: err}
				}
				return c.Exec(ctx, pos)
			}
			if len(args) > 0 {
				return WithHint(Usagef("%s takes no arguments, got %q", c.Name, args[0]), "run '"+t.Name+" "+c.Name+" --help'")
			}
			return c.Exec(ctx, args)
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

// UnknownCommand is the usage error for a command word the tool does not have.
func (t *Tool) UnknownCommand(word string) error {
	return WithHint(Usagef("unknown command %q", word), "run '"+t.Name+" --help'")
}

// errHelpPrinted is -h among a command's arguments: the usage is printed already.
var errHelpPrinted = errors.New("help requested")

// errNoCommand asks Run to print the usage and exit 2.
var errNoCommand = &Error{Err: flag.ErrHelp, Code: ExitUsage}

// Run parses args into the command tree under root, runs the command they name, and returns
// the exit status, reporting a failure as Report does. It gives root a -version flag. Usage is
// printed from here only, on stderr, once: for -h or --help (exit 0), and when root is run
// without a command and has no Exec of its own (exit 2). A flag error is one error and a hint
// to read the command's help, never the usage itself.
func (t *Tool) Run(ctx context.Context, root *ffcli.Command, args []string, stdout, stderr io.Writer) int {
	if root.Name == "" {
		root.Name = t.Name
	}
	if root.FlagSet == nil {
		root.FlagSet = flag.NewFlagSet(t.Name, flag.ContinueOnError)
	}
	version := root.FlagSet.Bool("version", false, "print the version and exit")
	exec := root.Exec
	root.Exec = func(ctx context.Context, args []string) error {
		switch {
		case *version:
			return t.PrintVersion(stdout)
		case exec != nil:
			return exec(ctx, args)
		case len(args) > 0:
			return t.UnknownCommand(args[0])
		}
		return errNoCommand
	}
	// The flag package writes its complaints and ffcli the usage to the flag sets' output:
	// kept, and shown only when the usage is what was asked for.
	usage := new(bytes.Buffer)
	setOutput(root, usage)
	err := root.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		err = &FlagError{Command: commandPath(t.Name, root, args), Err: unwrapParse(err)}
	}
	if err == nil {
		err = root.Run(ctx)
	}
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errHelpPrinted) {
		io.Copy(stderr, usage)
		return CodeOf(err)
	}
	return t.Report(ctx, stderr, err, false)
}

func setOutput(c *ffcli.Command, w io.Writer) {
	if c.FlagSet == nil {
		c.FlagSet = flag.NewFlagSet(c.Name, flag.ContinueOnError)
	}
	c.FlagSet.SetOutput(w)
	for _, s := range c.Subcommands {
		setOutput(s, w)
	}
}

// commandPath names the command whose flags args gave: the subcommand args begin with, else
// the tool.
func commandPath(name string, root *ffcli.Command, args []string) string {
	for _, s := range root.Subcommands {
		if len(args) > 0 && args[0] == s.Name {
			return name + " " + s.Name
		}
	}
	return name
}

// unwrapParse drops ffcli's "error parsing commandline arguments" wrapper.
func unwrapParse(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}
