package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"rewind.dev/rewind/store"
)

type restoreCmd struct {
	common
	codeOnly, contextOnly, inPlace, dryRun, yes bool
}

func (c *restoreCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.codeOnly, "code-only", false, "restore the tree only")
	fs.BoolVar(&c.contextOnly, "context-only", false, "restore the conversation only (a fork)")
	fs.BoolVar(&c.inPlace, "in-place", false, "cut the live transcript back (behind a verified backup) instead of forking")
	fs.BoolVar(&c.dryRun, "dry-run", false, "change nothing; show what would be written and deleted")
	fs.BoolVar(&c.yes, "yes", false, "do not ask for confirmation on a terminal")
}

func (c *restoreCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 1, 1, "restore"); err != nil {
		return err
	}
	if c.codeOnly && c.contextOnly {
		return usageError{"--code-only and --context-only exclude each other"}
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	cp, err := s.Resolve(args[0])
	if err != nil {
		return err
	}
	opts := store.RestoreOptions{Code: !c.contextOnly, DryRun: c.dryRun}
	hasChat := cp.Transcript != nil && cp.Transcript.Snapshot != ""
	if !c.codeOnly && (hasChat || c.contextOnly) {
		opts.Context = "fork"
		if c.inPlace {
			opts.Context = "in-place"
		}
	}
	if !c.dryRun && !c.yes && !c.json {
		what := []string{}
		if opts.Code {
			what = append(what, "the tree")
		}
		switch opts.Context {
		case "fork":
			what = append(what, "the chat (as a new forked session)")
		case "in-place":
			what = append(what, "the chat (cutting the live transcript, behind a backup)")
		}
		if !confirm(e, fmt.Sprintf("Restore %s to %s (%s)? A backup checkpoint is taken first.", strings.Join(what, " and "), cp.ID, ago(cp.CreatedAt))) {
			return fmt.Errorf("restore cancelled")
		}
	}
	stop := e.progress("restoring")
	res, err := s.Restore(ctx, cp, opts)
	stop()
	if res != nil && (err == nil || res.Backup != "") {
		e.printRestore(res, c.json)
	}
	return err
}

// ordinal is "last" for 1, else "2nd-last", "3rd-last", ….
func ordinal(n int) string {
	if n == 1 {
		return "last"
	}
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s-last", n, suffix)
}

// confirm asks on a terminal; without one (scripts, agents) it proceeds.
func confirm(e *env, question string) bool {
	f, ok := e.stdin.(*os.File)
	if !ok || !isTerminal(f) || !isTerminal(e.stderr) {
		return true
	}
	fmt.Fprintf(e.stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(f).ReadString('\n')
	line = strings.ToLower(strings.TrimSpace(line))
	return line == "y" || line == "yes"
}

func (e *env) printRestore(r *store.RestoreResult, asJSON bool) {
	if asJSON {
		e.json(r)
		return
	}
	if r.DryRun {
		fmt.Fprintf(e.stdout, "Dry run: nothing was changed.\n")
	}
	if r.Code != nil {
		verb := "Restored"
		if r.DryRun {
			verb = "Would restore"
		}
		fmt.Fprintf(e.stdout, "%s the tree to %s: %d written, %d deleted, %d mode changes, %d unchanged\n",
			verb, r.Checkpoint, r.Code.Written, r.Code.Deleted, r.Code.ModeChanged, r.Code.Unchanged)
		for _, p := range r.Code.WrittenList {
			fmt.Fprintf(e.stdout, "  write  %s\n", p)
		}
		for _, p := range r.Code.DeletedList {
			fmt.Fprintf(e.stdout, "  delete %s\n", p)
		}
		for _, p := range r.Code.ModeList {
			fmt.Fprintf(e.stdout, "  chmod  %s\n", p)
		}
		for _, p := range r.Code.Spared {
			fmt.Fprintf(e.stdout, "  kept   %s (ignored by the checkpoint's rules)\n", p)
		}
		for _, p := range r.Code.Unreadable {
			fmt.Fprintf(e.stdout, "  kept   %s (could not be read, now or when the checkpoint was taken)\n", p)
		}
		for _, p := range r.Code.Inputs {
			fmt.Fprintf(e.stdout, "  kept   %s (the snapshot's own file)\n", p)
		}
	}
	if r.Fork != nil {
		fmt.Fprintf(e.stdout, "Forked the conversation: new session %s (%d events kept)\n", r.Fork.SessionID, r.Fork.EventsKept)
		fmt.Fprintf(e.stdout, "  file   %s\n", r.Fork.Path)
		if r.Fork.Title != "" {
			fmt.Fprintf(e.stdout, "  title  %s\n", r.Fork.Title)
		}
		fmt.Fprintf(e.stdout, "  open   %s\n", r.Resume)
	}
	if r.Truncate != nil {
		fmt.Fprintf(e.stdout, "Cut %s back: %d events removed, %d kept; backup at %s\n", r.Truncate.Path, r.Truncate.EventsRemoved, r.Truncate.EventsKept, r.Truncate.Backup)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", name, w)
	}
	if r.Backup != "" {
		fmt.Fprintf(e.stdout, "Backup checkpoint %s; 'rewind undo-restore' reverts this.\n", r.Backup)
	}
}

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
	s, err := c.open(e)
	if err != nil {
		return err
	}
	res, err := s.Undo(ctx, c.dryRun)
	if res != nil {
		e.printRestore(res, c.json)
	}
	return err
}

type undoRestoreCmd struct{ common }

func (c *undoRestoreCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *undoRestoreCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "undo-restore"); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	res, err := s.UndoRestore(ctx)
	if res != nil {
		e.printRestore(res, c.json)
	}
	return err
}

type backCmd struct {
	common
	both, inPlace, dryRun, yes bool
	transcript, agent          string
}

func (c *backCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.both, "both", false, "also restore the code to the newest checkpoint taken before that prompt")
	fs.BoolVar(&c.inPlace, "in-place", false, "cut the live transcript back (behind a verified backup) instead of forking")
	fs.BoolVar(&c.dryRun, "dry-run", false, "change nothing; show the boundary and the checkpoint")
	fs.StringVar(&c.transcript, "transcript", "", "the transcript `PATH` (default: the session the hooks recorded)")
	fs.StringVar(&c.agent, "agent", "", "the transcript's agent (default: detected)")
	fs.BoolVar(&c.yes, "yes", false, "do not ask for confirmation on a terminal")
}

func (c *backCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 1, 1, "back"); err != nil {
		return err
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return usageError{fmt.Sprintf("back takes a number of prompts ≥ 1, got %q", args[0])}
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	transcript, err := absPath(c.transcript)
	if err != nil {
		return err
	}
	if !c.dryRun && !c.yes && !c.json {
		what := "the chat (as a new forked session)"
		if c.inPlace {
			what = "the chat (cutting the live transcript, behind a backup)"
		}
		if c.both {
			what += " and the tree"
		}
		if !confirm(e, fmt.Sprintf("Rewind %s to before the %s prompt? A backup checkpoint is taken first.", what, ordinal(n))) {
			return fmt.Errorf("back cancelled")
		}
	}
	res, err := s.Back(ctx, store.BackOptions{N: n, Both: c.both, InPlace: c.inPlace, DryRun: c.dryRun, TranscriptPath: transcript, Agent: c.agent})
	if res != nil && (err == nil || res.Backup != "") {
		e.printRestore(res, c.json)
	}
	return err
}
