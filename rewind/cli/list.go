package cli

import (
	"context"
	"flag"
	"fmt"

	"rewind.dev/rewind/store"
)

type listCmd struct {
	common
	all bool
	n   int
}

func (c *listCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.all, "all", false, "list every checkpoint, including restore backups")
	fs.IntVar(&c.n, "n", 20, "list at most `N` checkpoints (0: all)")
}

func (c *listCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "list"); err != nil {
		return err
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	cps, _, err := s.List()
	if err != nil {
		return err
	}
	if len(cps) == 0 && !c.json {
		return store.ErrNoCheckpoints
	}
	tw := e.table()
	if !c.json {
		fmt.Fprintln(tw, e.color("1", "  \tID\tAGE\tWHAT\tFILES\tSIZE\tCHANGES\tAFTER PROMPT"))
	}
	shown := 0
	for i, cp := range cps {
		if !c.all && cp.Trigger.Kind == "pre-restore" {
			continue
		}
		if c.n > 0 && shown >= c.n {
			break
		}
		shown++
		if c.json {
			if err := e.json(map[string]any{"type": "checkpoint", "n": i, "checkpoint": cp.Metadata}); err != nil {
				return err
			}
			continue
		}
		what := cp.Label()
		if cp.Trigger.Prompt != "" {
			what += " «" + oneLine(cp.Trigger.Prompt, 30) + "»"
		}
		if cp.Pinned != "" {
			what = "📌 " + cp.Pinned + " · " + what
		}
		changes := fmt.Sprintf("+%d ~%d -%d", cp.Changes.Added, cp.Changes.Modified, cp.Changes.Deleted)
		if cp.Snapshot.ReusedFrom != "" {
			changes = "= (unchanged)"
		}
		prompt := ""
		if cp.Transcript != nil {
			prompt = oneLine(cp.Transcript.LastPrompt, 40)
		}
		fmt.Fprintf(tw, "@%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", i, e.color("33", cp.ID), ago(cp.CreatedAt), oneLine(what, 48),
			cp.Snapshot.Files, humanBytes(cp.Snapshot.Bytes), changes, prompt)
	}
	return tw.Flush()
}

func (c *listCmd) doc() doc {
	return doc{
		summary: "list checkpoints, newest first",
		examples: []string{
			"rewind list",
			"rewind list -n 0 --all   # every checkpoint, restore backups too",
			"rewind list --json | jq -r .checkpoint.id",
		},
	}
}
