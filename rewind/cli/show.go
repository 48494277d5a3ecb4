package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"rewind.dev/internal/cmdline"
)

type showCmd struct{ common }

func (c *showCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *showCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 1, "show"); err != nil {
		return err
	}
	name := "@0" // (the newest, as git show shows HEAD)
	if len(args) == 1 {
		name = args[0]
	}
	s, cp, err := c.openAt(e, name)
	if err != nil {
		return err
	}
	if c.json {
		n, err := atN(s, cp)
		if err != nil {
			return err
		}
		return e.json(newCheckpointJSON(cp, n))
	}
	// Every value that came from data is shown through cmdline.QuoteText, a
	// path through cmdline.QuotePath.
	tw := e.table()
	fmt.Fprintf(tw, "Checkpoint\t%s\n", cmdline.QuoteText(cp.ID))
	fmt.Fprintf(tw, "Created\t%s (%s)\n", cp.CreatedAt.Local().Format("2006-01-02 15:04:05"), ago(cp.CreatedAt))
	trigger := triggerText(cp)
	if a := agentOf(cp); a != "" {
		trigger += " (" + cmdline.QuoteText(a) + ")"
	}
	fmt.Fprintf(tw, "Trigger\t%s\n", trigger)
	if cp.Description != "" {
		// Each line of a description in the value column, aligned.
		lines := strings.Split(strings.TrimRight(strings.ReplaceAll(cp.Description, "\t", "    "), "\n"), "\n")
		for i, l := range lines {
			label := ""
			if i == 0 {
				label = "Description"
			}
			fmt.Fprintf(tw, "%s\t%s\n", label, cmdline.QuoteText(strings.TrimRight(l, "\r")))
		}
	}
	if cp.Trigger.Prompt != "" {
		fmt.Fprintf(tw, "Before prompt\t%s\n", cmdline.QuoteText(oneLine(cp.Trigger.Prompt, 100)))
	}
	if cp.Pinned != "" {
		fmt.Fprintf(tw, "Pinned\t%s\n", cmdline.QuoteText(cp.Pinned))
	}
	fmt.Fprintf(tw, "Tree\t%s, %s, %s, %s (%s compressed)\n", count(cp.Snapshot.Files, "file"), count(cp.Snapshot.Dirs, "folder"),
		count(cp.Snapshot.Symlinks, "symlink"), humanBytes(cp.Snapshot.Bytes), humanBytes(cp.Snapshot.CompressedBytes))
	fmt.Fprintf(tw, "Tree hash\t%s\n", cmdline.QuoteText(cp.Snapshot.TreeHash))
	if cp.Snapshot.ReusedFrom != "" {
		fmt.Fprintf(tw, "Snapshot\tshared with %s (tree unchanged)\n", cmdline.QuoteText(cp.Snapshot.ReusedFrom))
	}
	fmt.Fprintf(tw, "Changes\t+%d ~%d -%d since %s\n", cp.Changes.Added, cp.Changes.Modified, cp.Changes.Deleted, cmdline.QuoteText(orNone(cp.Changes.Since)))
	if t := cp.Transcript; t != nil && t.OriginalPath == "" && t.Problem != "" {
		fmt.Fprintf(tw, "Transcript\tnone: %s\n", cmdline.QuoteText(t.Problem))
	} else if t != nil {
		fmt.Fprintf(tw, "Transcript\t%s (%s)\n", cmdline.QuotePath(t.OriginalPath), cmdline.QuoteText(orNone(t.Agent)))
		if t.Problem != "" {
			fmt.Fprintf(tw, "Not captured\t%s\n", cmdline.QuoteText(t.Problem))
		}
		fmt.Fprintf(tw, "Session\t%s\n", cmdline.QuoteText(orNone(t.SessionID)))
		fmt.Fprintf(tw, "Cursor\tbyte %d, last event %s\n", t.Cursor.ByteOffsetEnd, cmdline.QuoteText(orNone(t.Cursor.LastEventID)))
		if t.LastPrompt != "" {
			fmt.Fprintf(tw, "After prompt\t%s\n", cmdline.QuoteText(oneLine(t.LastPrompt, 100)))
		}
	}
	fmt.Fprintf(tw, "Folder\t%s\n", cmdline.QuotePath(cp.Dir))
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (c *showCmd) doc() doc {
	return doc{
		args:     "[<cp>]",
		summary:  "show a checkpoint's metadata (default @0, the newest)",
		examples: []string{"rewind show", "rewind show 20261122_1430   # a unique id prefix", "rewind show ':/add the cache'   # the newest whose prompt says so"},
	}
}
