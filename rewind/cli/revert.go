package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

type revertCmd struct {
	common
	confirmation
	conflicts string
}

// The ways a revert treats conflicts (--conflicts).
const (
	conflictsRefuse  = "refuse"  // change nothing, list them (the default)
	conflictsMarkers = "markers" // write git-style markers into conflicting text files
)

func (c *revertCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	cmdline.ChoiceVar(fs, &c.conflicts, "conflicts", conflictsRefuse, []string{conflictsRefuse, conflictsMarkers}, "what to do on conflicts, `HOW`: refuse (change nothing, list them) or markers (write git-style markers)")
	c.registerConfirm(fs)
}

func (c *revertCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 1, 2, "revert"); err != nil {
		return err
	}
	if c.conflicts != conflictsRefuse && c.conflicts != conflictsMarkers {
		return cmdline.Usagef("--conflicts is %s or %s, not %q", conflictsRefuse, conflictsMarkers, c.conflicts)
	}
	s, cp, err := c.openAt(e, args[0])
	if err != nil {
		return err
	}
	opts := store.RevertOptions{Markers: c.conflicts == conflictsMarkers, DryRun: c.dryRun}
	if len(args) == 2 {
		if opts.To, err = s.Resolve(args[1]); err != nil {
			return err
		}
	}
	if ask, err := c.asks(e, c.json); err != nil {
		return err
	} else if ask {
		plan, err := s.Revert(ctx, cp, withDryRunRevert(opts))
		if err != nil {
			if plan != nil {
				writeRevert(e.stderr, plan, false)
			}
			return err
		}
		if err := confirmPlan(e, plan.Kind, &plan.TreeChange, func(w io.Writer) { writeRevert(w, plan, false) }, fmt.Sprintf("Revert the step from %s?", cmdline.QuoteText(cp.ID))); err != nil {
			return err
		}
	}
	ctx, stop := e.progress(ctx, "reverting")
	res, err := s.Revert(ctx, cp, opts)
	stop()
	if res != nil {
		e.printRevert(res, c.json, err != nil && res.Backup != "")
	}
	return err
}

func withDryRunRevert(o store.RevertOptions) store.RevertOptions {
	o.DryRun = true
	return o
}

// writeRevert says what a revert did, or would do, for a person: what it
// takes back (writeRevertPlan), what that did to the tree, and its backup.
func writeRevert(w io.Writer, r *store.RevertResult, failed bool) {
	if r.Plan != nil {
		writeRevertPlan(w, r)
	}
	writeCode(w, &r.TreeChange, "the tree")
	writeBackup(w, &r.TreeChange, r.Kind, failed)
}

// writeRevertPlan says what a revert takes back, path by path, for a
// person: paths through cmdline.QuotePath, ids and the prompt through
// cmdline.QuoteText.
func writeRevertPlan(w io.Writer, r *store.RevertResult) {
	p := r.Plan
	to := "the tree now"
	if p.To != "" {
		to = cmdline.QuoteText(p.To)
	}
	prompt := ""
	if p.Prompt != "" {
		prompt = fmt.Sprintf(" (the prompt «%s»)", cmdline.QuoteText(oneLine(p.Prompt, 60)))
	}
	verb := "Reverting"
	if r.DryRun {
		verb = "Would revert"
	}
	fmt.Fprintf(w, "%s the step from %s%s to %s: %d path%s changed by it, %d conflict%s\n", verb, cmdline.QuoteText(p.From), prompt, to,
		len(p.Paths), plural(len(p.Paths)), p.Conflicts, plural(p.Conflicts))
	for _, rp := range p.Paths {
		line := fmt.Sprintf("  %-8s %s", rp.Action, cmdline.QuotePath(rp.Path))
		switch {
		case rp.Reason != "" && rp.Regions > 0:
			line += fmt.Sprintf(" (%s: %d region%s)", cmdline.QuoteText(rp.Reason), rp.Regions, plural(rp.Regions))
		case rp.Reason != "":
			line += " (" + cmdline.QuoteText(rp.Reason) + ")"
		case rp.Action == store.ActionRevert:
			line += " (" + stepWord(rp) + ")"
		}
		fmt.Fprintln(w, line)
	}
	if !r.DryRun && r.Code == nil && r.Backup == "" && p.Conflicts == 0 {
		fmt.Fprintln(w, "Nothing to change: the tree has none of the step's changes left.")
	}
}

// stepWord says what a path the revert puts back had gone through.
func stepWord(rp store.RevertPath) string {
	switch rp.Step {
	case "added":
		return "added by the step: removed"
	case "deleted":
		return "deleted by the step: back"
	case "mode":
		return "its mode, as before the step"
	}
	return "as before the step"
}

func (c *revertCmd) doc() doc {
	return doc{
		args:    "<cp> [<cp2>]",
		summary: "take back what one step did, keep every later change",
		text: `Undoes one step — the changes made between checkpoint <cp> and the next
checkpoint 'rewind list' shows (the row above it), or <cp2>: what the prompt
at <cp> did — while keeping every change made since, as git revert does: a
three-way merge per path of the state after the step, the tree now and the
state at <cp>. So the step of @N runs from @N to @N-1, and the step of @0 to
the tree now. The backups restores take are not steps: the same rows of list
make the same steps whatever was restored between them. The step of a
checkpoint taken at a prompt ends at the next listed checkpoint not taken
inside that prompt (its tool hooks). A file the step added is removed and one
it deleted comes back, unless later work changed it; a text file changed both
by the step and since is merged line by line.

On conflicts nothing is written: the conflicting paths are listed and the exit
status is 13. --conflicts=markers writes git-style markers into the conflicting
text files instead (other conflicting paths are left as they are; exit 13 too).
A backup checkpoint is taken first, so 'rewind undo-restore' reverts it. On a
terminal it shows the plan and asks first; --dry-run only shows it.`,
		examples: []string{
			"rewind revert @2 --dry-run",
			"rewind revert @2",
			"rewind revert @3 @1                # the changes from @3 to @1",
			"rewind revert @2 --conflicts=markers",
		},
	}
}
