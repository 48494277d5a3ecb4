package cli

import (
	"context"
	"flag"
	"fmt"

	"rewind.dev/internal/cmdline"
)

type undoCmd struct {
	common
	confirmation
}

func (c *undoCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	c.registerConfirm(fs)
}

func (c *undoCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "undo"); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	if ask, err := c.asks(e, c.json); err != nil {
		return err
	} else if ask {
		plan, err := s.Undo(ctx, true)
		if err != nil {
			return err
		}
		if err := confirmRestore(e, plan, fmt.Sprintf("Restore the tree to %s?", cmdline.QuoteText(plan.Checkpoint))); err != nil {
			return err
		}
	}
	ctx, stop := e.progress(ctx, "restoring")
	res, err := s.Undo(ctx, c.dryRun)
	stop()
	if res != nil && (err == nil || res.Backup != "") {
		e.printRestore(res, c.json, err != nil)
	}
	return err
}

func (c *undoCmd) doc() doc {
	return doc{
		summary: "undo the step the agent just took (code)",
		text: `Restores the code to the newest checkpoint when the tree has changed since
it, else to the one before it; run again, it goes one more checkpoint back
(restore backups do not count; 'rewind undo-restore' reverts an undo). On a
terminal it shows what it would change and asks first.`,
		examples: []string{"rewind undo --dry-run", "rewind undo"},
	}
}
