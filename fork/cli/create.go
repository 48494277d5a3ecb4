package cli

import (
	"context"
	"flag"

	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
)

// CreateConfig is `rewind-fork create`.
type CreateConfig struct {
	*streams
	cp      checkpointFlags
	agent   string
	out     string
	noTitle bool
}

func (c *CreateConfig) name() string { return "create" }
func (c *CreateConfig) usage() string {
	return "--from TRANSCRIPT (--offset N | < boundary-or-cursor.json) [--snapshot transcript.jsonl.gz] [--agent A] [--out PATH] [--no-title]"
}
func (c *CreateConfig) help() string {
	return "write a new session file holding the transcript up to a boundary"
}

// RegisterFlags registers create's flags.
func (c *CreateConfig) RegisterFlags(fs *flag.FlagSet) {
	c.cp.register(fs)
	cmdline.ChoiceVar(fs, &c.agent, "agent", "", jsonl.DialectNames(), "the transcript's agent `A` (claude, droid, …); detected when empty")
	fs.StringVar(&c.out, "out", "", "write the fork to `PATH` (default <new session id>.jsonl beside the transcript)")
	fs.BoolVar(&c.noTitle, "no-title", false, "do not mark the fork's title with [Fork]")
}

// Exec forks and prints {"type":"fork",…}.
func (c *CreateConfig) Exec(ctx context.Context, _ []string) error {
	cp, err := c.cp.checkpoint(c.stdin)
	if err != nil {
		return err
	}
	f, err := fork.Create(ctx, fork.CreateOptions{
		From: c.cp.from, Checkpoint: cp, Snapshots: c.cp.snapshots,
		Agent: c.agent, Out: c.out, NoTitle: c.noTitle,
	})
	if err != nil {
		return err
	}
	c.warn(f.Warnings)
	return c.printJSON(f)
}
