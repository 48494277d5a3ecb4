package cli

import (
	"context"
	"flag"
)

type undoRestoreCmd struct{ common }

func (c *undoRestoreCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *undoRestoreCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "undo-restore"); err != nil {
		return err
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	res, err := s.UndoRestore(ctx)
	if res != nil {
		e.printRestore(res, c.json)
	}
	return err
}

func (c *undoRestoreCmd) doc() doc {
	return doc{
		summary:  "revert the last restore, tree and transcript",
		examples: []string{"rewind undo-restore"},
	}
}
