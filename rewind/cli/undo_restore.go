package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

// undoRestoreCmd is undo-restore, and with redo set, redo: both revert an
// entry of the restore history.
type undoRestoreCmd struct {
	common
	confirmation
	redo bool
}

func (c *undoRestoreCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	c.registerConfirm(fs)
}

func (c *undoRestoreCmd) Exec(ctx context.Context, e *env, args []string) error {
	sub := "undo-restore"
	if c.redo {
		sub = "redo"
	}
	if err := needArgs(args, 0, 0, sub); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	undo := s.UndoRestore
	if c.redo {
		undo = s.Redo
	}
	o := store.UndoRestoreOptions{DryRun: c.dryRun}
	if ask, err := c.asks(e, c.json); err != nil {
		return err
	} else if ask {
		plan, err := undo(ctx, store.UndoRestoreOptions{DryRun: true})
		if err != nil {
			return err
		}
		verb := "Undo"
		if c.redo {
			verb = "Redo"
		}
		if err := confirmPlan(e, plan.Kind, &plan.TreeChange, func(w io.Writer) { writeUndoRestore(w, plan, false) }, fmt.Sprintf("%s %s?", verb, cmdline.QuoteText(plan.What))); err != nil {
			return err
		}
		o.Expect = plan.Entry
	}
	ctx, stop := e.progress(ctx, sub)
	res, err := undo(ctx, o)
	stop()
	if res != nil {
		e.printUndoRestore(res, c.json, err != nil)
	}
	return err
}

func (c *undoRestoreCmd) doc() doc {
	if c.redo {
		return doc{
			summary: "put back what the last undo-restore reverted",
			text: `Reverts the newest undo-restore, as long as no restore came after it: the
tree comes back from the checkpoint the undo-restore took first, the fork it
moved aside is moved back, a transcript it gave its earlier bytes gets the
later ones again. A backup checkpoint is taken first, so 'rewind undo-restore'
reverts the redo. On a terminal it shows what it would change and asks.`,
			examples: []string{"rewind redo --dry-run", "rewind redo"},
		}
	}
	return doc{
		summary: "revert the last restore, tree and transcript",
		text: `Reverts the newest restore, undo, back or redo not undone yet: the tree
comes back from the backup checkpoint it took, a fork it wrote is moved into
transcript-backup/ (never deleted), a transcript it cut gets its bytes back
(the current ones are kept aside). A backup checkpoint is taken first, so
'rewind redo' puts the restore back. Run again, it reverts the restore before.
On a terminal it shows what it would change and asks.`,
		examples: []string{"rewind undo-restore --dry-run", "rewind undo-restore --yes"},
	}
}
