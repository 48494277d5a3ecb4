package cli

import (
	"context"
	"flag"
)

type undoCmd struct {
	common
	dryRun bool
}

func (c *undoCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.dryRun, "dry-run", false, "change nothing; show what would be written and deleted")
}

func (c *undoCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "undo"); err != nil {
		return err
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	res, err := s.Undo(ctx, c.dryRun)
	if res != nil {
		e.printRestore(res, c.json)
	}
	return err
}

func (c *undoCmd) doc() doc {
	return doc{
		summary: "undo the step the agent just took (code)",
		text: `Restores the code to the newest checkpoint when the tree has changed since
it, else to the one before it.`,
		examples: []string{"rewind undo --dry-run", "rewind undo"},
	}
}
