package cli

import (
	"context"
	"flag"
	"fmt"

	"rewind.dev/internal/cmdline"
)

type validateCmd struct{ common }

func (c *validateCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *validateCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "validate"); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	ctx, stop := e.progress(ctx, "checking every checkpoint")
	probs, n, err := s.Validate(ctx)
	stop()
	if err != nil {
		return err
	}
	if c.json {
		for _, p := range probs {
			e.json(p)
		}
		e.json(map[string]any{"type": "validate", "checkpoints": n, "problems": len(probs)})
	} else {
		for _, p := range probs {
			fmt.Fprintf(e.stdout, "problem: %s: %s\n", cmdline.QuoteText(p.What), cmdline.QuoteText(p.Issue))
		}
		fmt.Fprintf(e.stdout, "%d checkpoint%s checked, %d problem%s\n", n, plural(n), len(probs), plural(len(probs)))
	}
	if len(probs) > 0 {
		return cmdline.WithHint(fmt.Errorf("the store has %d problem%s", len(probs), plural(len(probs))), "a damaged checkpoint can be deleted with 'rewind gc' or by removing its folder")
	}
	return nil
}

func (c *validateCmd) doc() doc {
	return doc{
		summary:  "check the store end to end",
		examples: []string{"rewind validate"},
	}
}
