package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"rewind.dev/rewind/store"
)

type gcCmd struct {
	common
	keep     int
	maxAge   string
	maxBytes int64
	dryRun   bool
}

func (c *gcCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.IntVar(&c.keep, "keep", 0, "keep the newest `N` checkpoints, delete older ones")
	fs.StringVar(&c.maxAge, "max-age", "", "delete checkpoints older than `D` (e.g. 30d, 12h)")
	fs.Int64Var(&c.maxBytes, "max-bytes", 0, "delete the oldest until the store uses at most `B` bytes")
	fs.BoolVar(&c.dryRun, "dry-run", false, "change nothing; list what would be deleted")
}

func (c *gcCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "gc"); err != nil {
		return err
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	age, err := store.ParseAge(c.maxAge)
	if err != nil {
		return usageError{err.Error()}
	}
	opts := store.GCOptions{Keep: c.keep, MaxAge: age, MaxBytes: c.maxBytes, DryRun: c.dryRun}
	if c.keep == 0 && age == 0 && c.maxBytes == 0 {
		cfg, err := s.Config()
		if err != nil {
			return err
		}
		opts.Keep, opts.MaxBytes = cfg.Retention.MaxCheckpoints, cfg.Retention.MaxBytes
		if opts.MaxAge, err = store.ParseAge(cfg.Retention.MaxAge); err != nil {
			return err
		}
	}
	res, err := s.GC(ctx, opts)
	if err != nil {
		return err
	}
	if c.json {
		return e.json(res)
	}
	verb := "Deleted"
	if res.DryRun {
		verb = "Would delete"
	}
	fmt.Fprintf(e.stdout, "%s %d checkpoints, freeing %s; %d kept\n", verb, len(res.Removed), humanBytes(res.FreedBytes), res.Kept)
	for _, id := range res.Removed {
		fmt.Fprintf(e.stdout, "  %s\n", id)
	}
	if len(res.Protected) > 0 {
		fmt.Fprintf(e.stdout, "Kept %d that the policy would delete: pinned or needed by undo-restore (%s)\n", len(res.Protected), strings.Join(res.Protected, ", "))
	}
	return nil
}

func (c *gcCmd) doc() doc {
	return doc{
		summary: "delete old checkpoints",
		text: `Without a policy flag it applies the configured retention. It never
deletes the newest checkpoint, pinned ones, or ones the restore history needs.`,
		examples: []string{"rewind gc --keep 100 --dry-run", "rewind gc --max-age 7d"},
	}
}
