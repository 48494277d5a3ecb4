package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store"
)

type saveCmd struct {
	common
	transcript, agent, pin string
	pinned, full           bool // pinned: --pin was given (an empty label is refused)
}

func (c *saveCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.StringVar(&c.transcript, "transcript", "", "capture this transcript `PATH` (default: the session the hooks recorded)")
	cmdline.ChoiceVar(fs, &c.agent, "agent", "", jsonl.DialectNames(), "the transcript's `AGENT` (claude, droid, …; default: detected)")
	fs.Func("pin", "pin the checkpoint with this `LABEL` (gc keeps it)", func(v string) error {
		c.pin, c.pinned = v, true
		return nil
	})
	fs.BoolVar(&c.full, "full", false, "write a full snapshot, not a layer over the newest checkpoint")
}

func (c *saveCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := checkAgent(c.agent); err != nil {
		return err
	}
	if c.pinned {
		if err := store.CheckLabel(c.pin); err != nil {
			return &cmdline.Error{Err: err, Code: cmdline.ExitUsage}
		}
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	transcript, err := absPath(c.transcript)
	if err != nil {
		return err
	}
	ctx, stop := e.progress(ctx, "saving")
	cp, err := s.Save(ctx, store.SaveOptions{
		Description: strings.Join(args, " "), Trigger: store.Trigger{Kind: store.TriggerManual}, Pin: c.pin,
		TranscriptPath: transcript, Agent: c.agent, UseSession: true, Full: c.full,
	})
	stop()
	if err != nil {
		return err
	}
	if c.json {
		e.warnUnreadable(cp)
		return e.json(newCheckpointJSON(cp, new(int))) // (the newest: @0)
	}
	how := fmt.Sprintf("full snapshot, %s compressed", humanBytes(cp.Snapshot.CompressedBytes))
	switch {
	case cp.Snapshot.ReusedFrom != "":
		how = "tree unchanged since " + cmdline.QuoteText(cp.Snapshot.ReusedFrom)
	case cp.Snapshot.Layer:
		how = fmt.Sprintf("%s stored, %s compressed", count(cp.Snapshot.LayerFiles, "changed file"), humanBytes(cp.Snapshot.CompressedBytes))
	}
	fmt.Fprintf(e.stdout, "Saved %s: %s, %s (%s)\n", cmdline.QuoteText(cp.ID), count(cp.Snapshot.Files, "file"), humanBytes(cp.Snapshot.Bytes), how)
	e.warnUnreadable(cp)
	if cp.Transcript != nil {
		if cp.HasTranscript {
			fmt.Fprintf(e.stdout, "Transcript: %s at byte %d\n", cmdline.QuotePath(cp.Transcript.OriginalPath), cp.Transcript.Cursor.ByteOffsetEnd)
		} else {
			fmt.Fprintf(e.stdout, "Transcript: %s (not written yet)\n", cmdline.QuotePath(cp.Transcript.OriginalPath))
		}
	}
	return nil
}

// warnUnreadable says on stderr which paths a checkpoint could not read,
// and why its snapshot is full when the chain it would have built on is
// damaged.
func (e *env) warnUnreadable(cp *store.Checkpoint) {
	if why := cp.Snapshot.FullBecause; why != "" {
		fmt.Fprintf(e.stderr, "%s: warning: %s; checkpoint %s is a full snapshot, built on nothing ('rewind validate' lists the damage)\n", name, cmdline.QuoteText(why), cmdline.QuoteText(cp.ID))
	}
	u := cp.Snapshot.Unreadable
	if len(u) == 0 {
		return
	}
	list := quotePaths(u[:min(len(u), 5)], ", ")
	if len(u) > 5 {
		list += fmt.Sprintf(", and %d more", len(u)-5)
	}
	fmt.Fprintf(e.stderr, "%s: warning: checkpoint %s could not read %d path%s (no permission, or an I/O error), which it does not hold and its restores leave alone: %s\n",
		name, cmdline.QuoteText(cp.ID), len(u), plural(len(u)), list)
}

func (c *saveCmd) doc() doc {
	return doc{
		args:    "[<description>]",
		summary: "take a checkpoint of the tree and the transcript",
		text: `The snapshot holds what git would not ignore, as a layer over the newest
checkpoint; the transcript is the one named, else the session the hooks
recorded.`,
		examples: []string{
			`rewind save "before the refactor"`,
			"rewind save --pin release-1   # gc keeps it",
			"rewind save --transcript ~/.claude/projects/-home-me-proj/5c1e….jsonl",
		},
	}
}
