package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

type gcCmd struct {
	common
	keep, maxAge, maxBytes string
	dryRun                 bool
}

func (c *gcCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.StringVar(&c.keep, "keep", "", "keep the newest `N` checkpoints that list shows (N ≥ 1), delete older ones; restore backups are not counted")
	fs.StringVar(&c.maxAge, "max-age", "", "delete checkpoints older than `D` (e.g. 30d, 12h)")
	fs.StringVar(&c.maxBytes, "max-bytes", "", "delete the oldest, restore backups first, until the store uses at most `SIZE` (e.g. 500M, 2G)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "change nothing; list what would be deleted")
}

// policy validates the flags into a policy: each one given must mean
// something (keep at least one, sizes and ages above zero).
func (c *gcCmd) policy() (store.GCOptions, error) {
	o := store.GCOptions{DryRun: c.dryRun}
	if c.keep != "" {
		n, err := strconv.Atoi(c.keep)
		if err != nil || n < 1 {
			return o, cmdline.Usagef("--keep takes a number of checkpoints of at least 1 (the newest is always kept), got %q", c.keep)
		}
		o.Keep = n
	}
	if c.maxAge != "" {
		d, err := store.ParseAge(c.maxAge)
		if err != nil || d <= 0 {
			return o, cmdline.Usagef("--max-age takes an age above zero, e.g. 30d, 12h or 90m, got %q", c.maxAge)
		}
		o.MaxAge = d
	}
	if c.maxBytes != "" {
		n, err := store.ParseSize(c.maxBytes)
		if err != nil || n <= 0 {
			return o, cmdline.Usagef("--max-bytes takes a size above zero, e.g. 500M, 2G or a number of bytes, got %q", c.maxBytes)
		}
		o.MaxBytes = n
	}
	return o, nil
}

func (c *gcCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "gc"); err != nil {
		return err
	}
	opts, err := c.policy()
	if err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	if opts.Keep == 0 && opts.MaxAge == 0 && opts.MaxBytes == 0 {
		cfg, err := s.Config()
		if err != nil {
			return err
		}
		opts.Keep, opts.MaxBytes = cfg.Retention.MaxCheckpoints, cfg.Retention.MaxBytes
		if opts.MaxAge, err = store.ParseAge(cfg.Retention.MaxAge); err != nil {
			return err
		}
	}
	pctx, stop := e.progress(ctx, "deleting old checkpoints")
	res, err := s.GC(pctx, opts)
	stop()
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
	kept := fmt.Sprintf("%d kept", res.Kept)
	if res.KeptBackups > 0 { // (list shows the others)
		kept += fmt.Sprintf(", %d of them restore backup%s", res.KeptBackups, plural(res.KeptBackups))
	}
	fmt.Fprintf(e.stdout, "%s %d checkpoint%s, freeing %s; %s\n", verb, len(res.Removed), plural(len(res.Removed)), humanBytes(res.FreedBytes), kept)
	// Ids are the names of the store's folders: data, shown through
	// cmdline.QuoteText.
	for _, id := range res.Removed {
		fmt.Fprintf(e.stdout, "  %s\n", cmdline.QuoteText(id))
	}
	if len(res.Protected) > 0 {
		fmt.Fprintf(e.stdout, "Kept %d that the policy would delete: pinned, needed by undo-restore or redo, or perhaps by a checkpoint gc cannot read or remove (%s)\n", len(res.Protected), cmdline.QuoteText(strings.Join(res.Protected, ", ")))
	}
	// Another user's checkpoints are named as such, not as damaged, with
	// the command that gives them back.
	theirs := map[string]bool{}
	for _, u := range res.Unremovable {
		theirs[u.ID] = true
		fmt.Fprintf(e.stderr, "%s: warning: %s; %s lets gc delete it as the policy says\n", name, cmdline.QuoteText(u.Message()), cmdline.QuoteText(u.Fix))
	}
	damaged := slices.DeleteFunc(slices.Clone(res.Damaged), func(id string) bool { return theirs[id] })
	if len(damaged) > 0 {
		fmt.Fprintf(e.stderr, "%s: warning: gc could not read checkpoint%s %s, so it deleted nothing older, nor any archive %s might read; 'rewind validate' says what is damaged\n",
			name, plural(len(damaged)), cmdline.QuoteText(strings.Join(damaged, ", ")), pronoun(len(damaged)))
	}
	return nil
}

func (c *gcCmd) doc() doc {
	return doc{
		summary: "delete old checkpoints",
		text: fmt.Sprintf(`Without a policy flag it applies the configured retention. The policy counts
the checkpoints 'rewind list' shows: --keep N keeps the newest N of them and
deletes older ones. The backups restores take (list --all) are never counted
and never take a place among the N: a backup goes when N listed checkpoints
are newer than it, so the backups taken since the oldest of the N stay.
--max-age deletes backups and listed checkpoints alike; --max-bytes deletes
backups first, oldest first, then listed checkpoints, oldest first.
Whatever the policy, gc keeps every backup that some run of %d undo-restores
and redos, in any order, would restore from, and never deletes the newest
checkpoint, the newest that list shows, or pinned ones.`, store.UndoReach),
		examples: []string{"rewind gc --keep 100 --dry-run", "rewind gc --max-age 7d"},
	}
}
