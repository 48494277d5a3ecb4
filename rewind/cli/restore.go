package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
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
	s, err := c.open()
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

func (c *restoreCmd) doc() doc {
	return doc{
		args:    "<cp>",
		summary: "restore code and/or chat from a checkpoint",
		text: `Restores the tree exactly and the conversation as a fork (a new session
beside the transcript), or only one of them. A backup checkpoint is taken first
and the restore recorded, so 'rewind undo-restore' reverts it. On a terminal it
asks first.`,
		examples: []string{
			"rewind restore @2 --code-only",
			"rewind restore @2 --context-only --dry-run",
		},
	}
}
