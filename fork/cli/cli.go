// Package cli is the rewind-fork command, importable so tests (and the rewind porcelain's
// tests) run it in-process.
//
//	rewind-fork create   --from TRANSCRIPT (--offset N | < boundary-or-cursor.json)
//	                     [--snapshot transcript.jsonl.gz]… [--agent A] [--out PATH] [--no-title]
//	rewind-fork truncate --from TRANSCRIPT (--offset N | < boundary-or-cursor.json)
//	                     --backup-dir DIR [--snapshot transcript.jsonl.gz]…
//
// Stdin takes the JSON that `rewind-jsonl back` or `rewind-jsonl cursor` prints, so
// `rewind-jsonl back 1 t.jsonl | rewind-fork create --from t.jsonl` forks before the last
// prompt. Every command prints one JSON object on stdout; errors go to stderr as
// "rewind-fork: error: …" with a hint where one helps. Exit status: 0 ok, 1 failure, 2 usage,
// 130 interrupted.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/fork"
)

// Version is set at build time (-X rewind.dev/fork/cli.Version=…).
var Version string

const name = "rewind-fork"

// usageError is bad command-line input: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// io holds the streams a command reads and writes.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// printJSON writes v as one JSON line on stdout.
func (s *streams) printJSON(v any) error {
	enc := json.NewEncoder(s.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (s *streams) warn(msgs []string) {
	for _, m := range msgs {
		fmt.Fprintf(s.stderr, "%s: warning: %s\n", name, m)
	}
}

// Main runs rewind-fork with args (without the program name) and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := &streams{stdin: stdin, stdout: stdout, stderr: stderr}
	rootFS := flag.NewFlagSet(name, flag.ContinueOnError)
	rootFS.SetOutput(stderr)
	version := rootFS.Bool("version", false, "print the version and exit")
	root := &ffcli.Command{
		Name:       name,
		ShortUsage: name + " <create|truncate> [flags]",
		ShortHelp:  "fork an agent session at a boundary, or cut it back in place",
		LongHelp: strings.TrimSpace(`
create writes a new session file holding the transcript up to a boundary,
which the agent lists as its own session; truncate cuts the live transcript
back behind a verified backup. Output is JSON on stdout. See rewind-fork(1).`),
		FlagSet: rootFS,
		Subcommands: []*ffcli.Command{
			command(s, &CreateConfig{streams: s}),
			command(s, &TruncateConfig{streams: s}),
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
		fmt.Fprintln(stderr, ffcli.DefaultUsageFunc(root))
		return 2
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		fmt.Fprintf(stderr, "%s: interrupted\n", name)
		return 130
	}
	fmt.Fprintf(stderr, "%s: error: %v\n", name, err)
	if h := fork.Hint(err); h != "" {
		fmt.Fprintf(stderr, "%s: hint: %s\n", name, h)
	}
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// config is one subcommand.
type config interface {
	name() string
	usage() string
	help() string
	RegisterFlags(fs *flag.FlagSet)
	Exec(ctx context.Context, args []string) error
}

func command(s *streams, c config) *ffcli.Command {
	fs := flag.NewFlagSet(name+" "+c.name(), flag.ContinueOnError)
	fs.SetOutput(s.stderr)
	c.RegisterFlags(fs)
	return &ffcli.Command{
		Name:       c.name(),
		ShortUsage: name + " " + c.name() + " " + c.usage(),
		ShortHelp:  c.help(),
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Sprintf("%s takes no arguments, got %q; run '%s %s --help'", c.name(), args[0], name, c.name())}
			}
			return c.Exec(ctx, args)
		},
	}
}

// checkpointFlags are the flags create and truncate share: where the transcript is and where
// to cut it.
type checkpointFlags struct {
	from      string
	offset    int64
	snapshots stringList
}

func (c *checkpointFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.from, "from", "", "the live transcript `TRANSCRIPT`")
	fs.Int64Var(&c.offset, "offset", -1, "cut at byte `N` (keep [0, N)); without it, read a boundary or cursor JSON on stdin")
	fs.Var(&c.snapshots, "snapshot", "the checkpoint's `transcript.jsonl.gz` (repeat for a chain, oldest first)")
}

// checkpoint validates the flags and reads stdin when no --offset was given.
func (c *checkpointFlags) checkpoint(stdin io.Reader) (fork.Checkpoint, error) {
	if c.from == "" {
		return fork.Checkpoint{}, usageError{"--from TRANSCRIPT is required"}
	}
	if c.offset >= 0 {
		return fork.Checkpoint{Offset: c.offset}, nil
	}
	if c.offset != -1 {
		return fork.Checkpoint{}, usageError{fmt.Sprintf("--offset %d is negative", c.offset)}
	}
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return fork.Checkpoint{}, usageError{"no --offset and stdin is a terminal; pipe in `rewind-jsonl back N FILE` or `rewind-jsonl cursor FILE`, or pass --offset N"}
		}
	}
	data, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return fork.Checkpoint{}, fmt.Errorf("read stdin: %w", err)
	}
	cp, err := fork.ParseCheckpoint(data)
	if err != nil {
		return fork.Checkpoint{}, usageError{err.Error() + "; pipe in `rewind-jsonl back N FILE` or `rewind-jsonl cursor FILE`, or pass --offset N"}
	}
	return cp, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

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
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return "devel"
}
