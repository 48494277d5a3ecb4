package cli

import (
	"context"
	"flag"
	"fmt"

	"rewind.dev/internal/cmdline"
)

type pinCmd struct {
	common
	unpin bool
}

func (c *pinCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *pinCmd) Exec(ctx context.Context, e *env, args []string) error {
	sub, hi := "pin", 2
	if c.unpin {
		sub, hi = "unpin", 1
	}
	if err := needArgs(args, 1, hi, sub); err != nil {
		return err
	}
	s, cp, err := c.openAt(e, args[0])
	if err != nil {
		return err
	}
	label := ""
	if !c.unpin {
		label = "pinned"
		if len(args) == 2 {
			label = args[1]
		}
	}
	if err := s.Pin(ctx, cp, label); err != nil {
		return err
	}
	if c.json {
		return e.json(map[string]any{"type": sub, "checkpoint": cp.ID, "label": label})
	}
	if c.unpin {
		fmt.Fprintf(e.stdout, "Unpinned %s\n", cmdline.QuoteText(cp.ID))
	} else {
		fmt.Fprintf(e.stdout, "Pinned %s as %s; gc keeps it\n", cmdline.QuoteText(cp.ID), quoted(label))
	}
	return nil
}

func (c *pinCmd) doc() doc {
	if c.unpin {
		return doc{args: "<cp>", summary: "let gc delete a checkpoint again", examples: []string{"rewind unpin @3"}}
	}
	return doc{
		args:    "<cp> [label]",
		summary: "keep a checkpoint through gc",
		text: `The label names the checkpoint from then on, wherever a checkpoint is
taken: rewind restore release-1.`,
		examples: []string{"rewind pin @0 release-1", "rewind pin ':/add the cache' cache"},
	}
}
