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
// "rewind-fork: error: …" with a hint where one helps (hints.go). Exit status: 0 ok, 1 failure,
// 2 usage, 130 interrupted.
package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
)

const name = "rewind-fork"

var tool = &cmdline.Tool{Name: name, Hint: hint}

// streams holds the streams a command reads and writes.
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

// warn prints the library's warnings on stderr; they name the transcript's
// files, shown through cmdline.QuoteText as errors are.
func (s *streams) warn(msgs []string) {
	for _, m := range msgs {
		fmt.Fprintf(s.stderr, "%s: warning: %s\n", name, cmdline.QuoteText(m))
	}
}

// Main runs rewind-fork with args (without the program name) and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return tool.Run(ctx, commands(&streams{stdin: stdin, stdout: stdout, stderr: stderr}), args, stdout, stderr)
}

// Commands is the command tree Main runs, for what reads it without running it: rewind's
// shell completions and the test that holds the man page to the flags.
func Commands() *ffcli.Command {
	return commands(&streams{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
}

func commands(s *streams) *ffcli.Command {
	return &ffcli.Command{
		Name:       name,
		ShortUsage: name + " <create|truncate> [flags]",
		ShortHelp:  "fork an agent session at a boundary, or cut it back in place",
		LongHelp: strings.TrimSpace(`
create writes a new session file holding the transcript up to a boundary,
which the agent lists as its own session; truncate cuts the live transcript
back behind a verified backup. Output is JSON on stdout. See rewind-fork(1).`),
		Subcommands: []*ffcli.Command{
			command(&CreateConfig{streams: s}),
			command(&TruncateConfig{streams: s}),
		},
	}
}

// config is one subcommand.
type config interface {
	name() string
	usage() string
	help() string
	RegisterFlags(fs *flag.FlagSet)
	Exec(ctx context.Context, args []string) error
}

func command(c config) *ffcli.Command {
	return tool.Command(cmdline.Command{Name: c.name(), Args: c.usage(), Help: c.help(), Flags: c.RegisterFlags, Exec: c.Exec})
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

// pipeHint says where the cut comes from when --offset is not given.
const pipeHint = "pipe in `rewind-jsonl back N FILE` or `rewind-jsonl cursor FILE`, or pass --offset N"

// checkpoint validates the flags and reads stdin when no --offset was given.
func (c *checkpointFlags) checkpoint(stdin io.Reader) (fork.Checkpoint, error) {
	if c.from == "" {
		return fork.Checkpoint{}, cmdline.Usagef("--from TRANSCRIPT is required")
	}
	if c.offset >= 0 {
		return fork.Checkpoint{Offset: c.offset}, nil
	}
	if c.offset != -1 {
		return fork.Checkpoint{}, cmdline.Usagef("--offset %d is negative", c.offset)
	}
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return fork.Checkpoint{}, cmdline.WithHint(cmdline.Usagef("no --offset and stdin is a terminal"), pipeHint)
		}
	}
	data, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return fork.Checkpoint{}, fmt.Errorf("read stdin: %w", err)
	}
	cp, err := fork.ParseCheckpoint(data)
	if err != nil {
		return fork.Checkpoint{}, cmdline.WithHint(cmdline.Usagef("%w", err), pipeHint)
	}
	return cp, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }
