package cli

import (
	"context"
	"flag"
	"strconv"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
)

// turnsConfig is `rewind-jsonl turns FILE [--last N]`.
type turnsConfig struct {
	env   *env
	agent agentFlag
	last  int
}

func newTurnsCmd(e *env) *ffcli.Command {
	c := &turnsConfig{env: e}
	return newSub("turns", "FILE [--last N] [--agent A]",
		"list the user prompts, newest first",
		"Prints one {\"type\":\"turn\",…} line per real user prompt, newest first (n=1 is the most\n"+
			"recent), read from the end of the file. With --last N it stops after N prompts.", c)
}

func (c *turnsConfig) RegisterFlags(fs *flag.FlagSet) {
	c.agent.register(fs)
	fs.IntVar(&c.last, "last", 0, "only the N most recent prompts (0: all)")
}

type turnOut struct {
	Type string `json:"type"`
	jsonl.Turn
}

func (c *turnsConfig) Exec(ctx context.Context, args []string) error {
	path, err := onePath("turns", args)
	if err != nil {
		return err
	}
	if c.last < 0 {
		return cmdline.WithHint(cmdline.Usagef("--last %d is negative", c.last), "pass --last N with N ≥ 1, or leave it out for all prompts")
	}
	t, err := c.agent.open(path)
	if err != nil {
		return err
	}
	defer t.Close()
	var werr error
	n := 0
	err = t.ScanTurns(ctx, func(tu jsonl.Turn) bool {
		if werr = c.env.emit(turnOut{Type: "turn", Turn: tu}); werr != nil {
			return false
		}
		n++
		return c.last == 0 || n < c.last
	})
	if err != nil {
		return err
	}
	return werr
}

// backConfig is `rewind-jsonl back N FILE`.
type backConfig struct {
	env   *env
	agent agentFlag
}

func newBackCmd(e *env) *ffcli.Command {
	c := &backConfig{env: e}
	return newSub("back", "N FILE [--agent A]",
		"print the cut before the Nth most recent user prompt",
		"Prints {\"type\":\"boundary\",\"offset\":…,\"prompt_offset\":…,\"turn\":{…}}. offset is where a fork\n"+
			"cuts: before the prompt and the lines the agent wrote for it just before it; prompt_offset\n"+
			"is where the prompt line starts. Exit status 4 when there are fewer than N prompts.", c)
}

func (c *backConfig) RegisterFlags(fs *flag.FlagSet) { c.agent.register(fs) }

func (c *backConfig) Exec(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return cmdline.WithHint(cmdline.Usagef("back takes N and FILE"), "run rewind-jsonl back 1 FILE to cut before the most recent prompt")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return cmdline.WithHint(cmdline.Usagef("the number of prompts %q is not a whole number ≥ 1", args[0]), "run rewind-jsonl back 1 FILE to cut before the most recent prompt")
	}
	path, err := onePath("back", args[1:])
	if err != nil {
		return err
	}
	t, err := c.agent.open(path)
	if err != nil {
		return err
	}
	defer t.Close()
	tu, err := t.Back(ctx, n)
	if err != nil {
		return err
	}
	return c.env.emit(jsonl.BoundaryLine{Type: "boundary", Offset: tu.Offset, PromptOffset: tu.PromptOffset, ParentID: tu.ParentID, Turn: tu})
}
