package cli

import (
	"context"
	"flag"
	"fmt"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

type pinCmd struct {
	common
	unpin bool
	force bool
}

func (c *pinCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	if !c.unpin {
		fs.BoolVar(&c.force, "force", false, "move the label from the checkpoint that has it (that one stays pinned, as \""+store.DefaultLabel+"\")")
	}
}

// pinArgs are pin's and unpin's arguments, checked.
type pinArgs struct {
	name  string // the checkpoint
	label string // "" unpins
}

// args checks pin's and unpin's arguments before the store is opened: a
// label that could never name the checkpoint is a usage error.
func (c *pinCmd) args(args []string) (pinArgs, error) {
	sub, hi := "pin", 2
	if c.unpin {
		sub, hi = "unpin", 1
	}
	if err := needArgs(args, 1, hi, sub); err != nil {
		return pinArgs{}, err
	}
	a := pinArgs{name: args[0]}
	if !c.unpin {
		a.label = store.DefaultLabel
		if len(args) == 2 {
			a.label = args[1]
		}
		if err := store.CheckLabel(a.label); err != nil {
			return pinArgs{}, &cmdline.Error{Err: err, Code: cmdline.ExitUsage}
		}
	}
	return a, nil
}

func (c *pinCmd) Exec(ctx context.Context, e *env, args []string) error {
	a, err := c.args(args)
	if err != nil {
		return err
	}
	s, cp, err := c.openAt(e, a.name)
	if err != nil {
		return err
	}
	var moved []string
	if c.unpin {
		err = s.Unpin(ctx, cp)
	} else {
		moved, err = s.Pin(ctx, cp, store.PinOptions{Label: a.label, Force: c.force})
	}
	if err != nil {
		return err
	}
	sub := "pin"
	if c.unpin {
		sub = "unpin"
	}
	if c.json {
		out := map[string]any{"type": sub, "checkpoint": cp.ID, "label": a.label}
		if len(moved) > 0 {
			out["moved_from"] = moved
		}
		return e.json(out)
	}
	for _, id := range moved {
		fmt.Fprintf(e.stdout, "Moved %s from %s (still pinned, as %s)\n", quoted(a.label), cmdline.QuoteText(id), quoted(store.DefaultLabel))
	}
	if c.unpin {
		fmt.Fprintf(e.stdout, "Unpinned %s\n", cmdline.QuoteText(cp.ID))
	} else {
		fmt.Fprintf(e.stdout, "Pinned %s as %s; gc keeps it\n", cmdline.QuoteText(cp.ID), quoted(a.label))
	}
	return nil
}

func (c *pinCmd) doc() doc {
	if c.unpin {
		return doc{args: "<cp>", summary: "let gc delete a checkpoint again", examples: []string{"rewind unpin @3"}}
	}
	return doc{
		args:    "<cp> [<label>]",
		summary: "keep a checkpoint through gc",
		text: `The label names the checkpoint from then on, wherever a checkpoint is
taken: rewind restore release-1. Without one it is "pinned", which any
number of checkpoints may carry. A label must name only this checkpoint:
one that reads as another name (@N, :/TEXT, digits an id could start with,
a leading -), or is another checkpoint's description, is refused; one
another checkpoint carries moves here only with --force, and that
checkpoint stays pinned, as "pinned".`,
		examples: []string{"rewind pin @0 release-1", "rewind pin ':/add the cache' cache", "rewind pin @0 release-1 --force"},
	}
}
