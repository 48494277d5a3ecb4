package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"strings"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
	"rewind.dev/snap"
)

type restoreCmd struct {
	common
	confirmation
	codeOnly, contextOnly, inPlace bool
}

func (c *restoreCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.codeOnly, "code-only", false, "restore the tree only")
	fs.BoolVar(&c.contextOnly, "context-only", false, "restore the conversation only (a fork)")
	fs.BoolVar(&c.inPlace, "in-place", false, "cut the live transcript back (behind a verified backup) instead of forking")
	c.registerConfirm(fs)
}

func (*restoreCmd) takesPaths() {}

func (c *restoreCmd) Exec(ctx context.Context, e *env, args []string) error {
	args, paths, err := splitPaths(args)
	if err != nil {
		return err
	}
	if err := needArgs(args, 1, 1, "restore"); err != nil {
		return err
	}
	if c.codeOnly && c.contextOnly {
		return cmdline.Usagef("--code-only and --context-only exclude each other")
	}
	if paths != nil && (c.contextOnly || c.inPlace) {
		return cmdline.Usagef("paths restore files of the tree, not the conversation: drop --context-only and --in-place, or the paths")
	}
	s, cp, err := c.openAt(e, args[0])
	if err != nil {
		return err
	}
	ps, err := c.pathspec(s, paths)
	if err != nil {
		return err
	}
	opts := store.RestoreOptions{Code: !c.contextOnly, DryRun: c.dryRun, Paths: ps}
	hasChat := cp.Transcript != nil && cp.Transcript.Snapshot != ""
	if !c.codeOnly && ps == nil && (hasChat || c.contextOnly) {
		opts.Context = store.ContextFork
		if c.inPlace {
			opts.Context = store.ContextInPlace
		}
	}
	if ask, err := c.asks(e, c.json); err != nil {
		return err
	} else if ask {
		plan, err := s.Restore(ctx, cp, withDryRun(opts))
		if err != nil {
			return err
		}
		what := ""
		if ps != nil {
			what = " " + cmdline.QuoteText(strings.Join(paths, " ")) // (patterns, as given: text)
		}
		if plan.Nothing { // (nothing to ask about: the restore says so)
			closeLists(&plan.TreeChange)
		} else if err := confirmRestore(e, plan, fmt.Sprintf("Restore%s to %s (%s)?", what, cmdline.QuoteText(cp.ID), ago(cp.CreatedAt))); err != nil {
			return err
		}
	}
	ctx, stop := e.progress(ctx, "restoring")
	res, err := s.Restore(ctx, cp, opts)
	stop()
	if res != nil && res.Nothing && !res.DryRun && !c.json {
		closeLists(&res.TreeChange)
		fmt.Fprintf(e.stdout, "Nothing to restore: %s already %s's\n", nothingWhat(opts, paths), cmdline.QuoteText(cp.ID))
		return nil
	}
	if res != nil && (err == nil || res.Backup != "") {
		e.printRestore(res, c.json, err != nil)
	}
	return err
}

// nothingWhat names, for "Nothing to restore: … already <cp>'s", what a
// restore with opts would have restored.
func nothingWhat(opts store.RestoreOptions, paths []string) string {
	switch {
	case opts.Paths != nil && len(paths) == 1:
		return cmdline.QuoteText(paths[0]) + " is" // (a pattern, as given: text)
	case opts.Paths != nil:
		return cmdline.QuoteText(strings.Join(paths, " ")) + " are"
	case opts.Code && opts.Context != "":
		return "the tree and the conversation are"
	case opts.Code:
		return "the tree is"
	}
	return "the conversation is"
}

// confirmation is the flags of a command that changes the tree: it shows
// what it would change and asks first on a terminal.
type confirmation struct {
	dryRun, yes bool
}

func (c *confirmation) registerConfirm(fs *flag.FlagSet) {
	fs.BoolVar(&c.dryRun, "dry-run", false, "change nothing; show what would be written, deleted and moved")
	fs.BoolVar(&c.yes, "yes", false, "do not ask first on a terminal")
}

// asks reports whether the command is to show its plan and ask: on a
// terminal (canAsk), not in a dry run, nor with --yes. --json never asks (a
// program reads it, and the question is text): where it would, it is
// refused before anything is done, as terraform's -json wants
// -auto-approve; off a terminal nothing asks, so --json goes ahead.
func (c *confirmation) asks(e *env, asJSON bool) (bool, error) {
	if c.dryRun || c.yes || !canAsk(e) {
		return false, nil
	}
	if asJSON {
		return false, cmdline.WithHint(cmdline.Usagef("--json does not ask on a terminal: add --yes to go ahead"),
			"--dry-run --json prints the plan without changing anything")
	}
	return true, nil
}

// canAsk reports whether there is a person to ask: stdin and stderr are a
// terminal. Without one (scripts, an agent's shell) commands do not ask.
func canAsk(e *env) bool {
	f, ok := e.stdin.(*os.File)
	return ok && isTerminal(f) && isTerminal(e.stderr)
}

// confirmPlan shows on stderr what a plan (a dry run's result, tc its
// TreeChange) would change, as write says it, and asks question; a "no" is
// an error naming kind. Without a terminal it does not ask.
func confirmPlan(e *env, kind store.RestoreKind, tc *store.TreeChange, write func(io.Writer), question string) error {
	if !canAsk(e) {
		return nil
	}
	write(e.stderr) // (the plan, without the dry run's "nothing was changed": nothing is yet)
	closeLists(tc)
	fmt.Fprintf(e.stderr, "%s A backup checkpoint is taken first. [y/N] ", question)
	line, _ := bufio.NewReader(e.stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return fmt.Errorf("%s cancelled; nothing was changed", kind)
	}
	return nil
}

// confirmRestore is confirmPlan for a restore, an undo or a back.
func confirmRestore(e *env, plan *store.RestoreResult, question string) error {
	return confirmPlan(e, plan.Kind, &plan.TreeChange, func(w io.Writer) { writeRestore(w, plan, false) }, question)
}

func withDryRun(o store.RestoreOptions) store.RestoreOptions {
	o.DryRun = true
	return o
}

// listCap bounds the paths a restore lists in text (--json lists all); a
// dry run lists every one: that is what it is for.
const listCap = 20

// printResult prints what a restore, undo, back, undo-restore, redo or
// revert did: r as JSON, or as text on stdout (write's, after a dry run's
// notice) with warnings on stderr. tc is r's TreeChange.
func (e *env) printResult(r any, tc *store.TreeChange, warnings []string, asJSON bool, write func(io.Writer)) {
	defer closeLists(tc)
	if asJSON {
		if err := e.json(r); err != nil {
			fmt.Fprintf(e.stderr, "%s: %s\n", name, cmdline.QuoteText(err.Error()))
		}
		return
	}
	if tc.DryRun {
		fmt.Fprintf(e.stdout, "Dry run: nothing was changed.\n")
	}
	write(e.stdout)
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", name, cmdline.QuoteText(w))
	}
}

// printRestore prints what a restore, undo or back did. failed says the
// command stopped part way.
func (e *env) printRestore(r *store.RestoreResult, asJSON, failed bool) {
	e.printResult(r, &r.TreeChange, r.Warnings, asJSON, func(w io.Writer) { writeRestore(w, r, failed) })
}

// printUndoRestore prints what an undo-restore or a redo did. failed says
// the command stopped part way.
func (e *env) printUndoRestore(r *store.UndoRestoreResult, asJSON, failed bool) {
	e.printResult(r, &r.TreeChange, r.Warnings, asJSON, func(w io.Writer) { writeUndoRestore(w, r, failed) })
}

// printRevert prints what a revert did. failed says the command stopped
// part way.
func (e *env) printRevert(r *store.RevertResult, asJSON, failed bool) {
	e.printResult(r, &r.TreeChange, r.Warnings, asJSON, func(w io.Writer) { writeRevert(w, r, failed) })
}

// would is done, or in a dry run plan.
func would(tc *store.TreeChange, done, plan string) string {
	if tc.DryRun {
		return plan
	}
	return done
}

// writeRestore says what a restore, undo or back did, or would do, for a
// person: its paths through cmdline.QuotePath, the ids, prompts and
// commands it holds through cmdline.QuoteText.
func writeRestore(w io.Writer, r *store.RestoreResult, failed bool) {
	what := "the tree to " + cmdline.QuoteText(r.Checkpoint)
	if len(r.Paths) > 0 {
		what = cmdline.QuoteText(strings.Join(r.Paths, " ")) + " to " + cmdline.QuoteText(r.Checkpoint) // (pathspecs: text)
	}
	writeCode(w, &r.TreeChange, what)
	if c := r.Cut; c != nil {
		writeCut(w, c)
	}
	if r.Fork != nil {
		fmt.Fprintf(w, "Forked the conversation: new session %s (%s kept)\n", cmdline.QuoteText(r.Fork.SessionID), count(int(r.Fork.EventsKept), "event"))
		fmt.Fprintf(w, "  file   %s\n", cmdline.QuotePath(r.Fork.Path))
		if r.Fork.Title != "" {
			fmt.Fprintf(w, "  title  %s\n", cmdline.QuoteText(r.Fork.Title))
		}
		fmt.Fprintf(w, "  open   %s\n", cmdline.QuoteText(r.Resume))
	} else if r.Resume != "" && !r.DryRun {
		fmt.Fprintf(w, "Open the fork with: %s\n", cmdline.QuoteText(r.Resume))
	}
	if r.Truncate != nil {
		fmt.Fprintf(w, "Cut %s back: %s removed, %d kept; backup at %s\n", cmdline.QuotePath(r.Truncate.Path), count(int(r.Truncate.EventsRemoved), "event"), r.Truncate.EventsKept, cmdline.QuotePath(r.Truncate.Backup))
	}
	writeBackup(w, &r.TreeChange, r.Kind, failed)
}

// writeUndoRestore says what an undo-restore or a redo did, or would do,
// for a person, quoted as writeRestore quotes.
func writeUndoRestore(w io.Writer, r *store.UndoRestoreResult, failed bool) {
	if r.Entry != "" && !failed { // (one that failed says so in its error)
		fmt.Fprintf(w, "%s %s.\n", would(&r.TreeChange, undoVerb(r.Kind, false), undoVerb(r.Kind, true)), cmdline.QuoteText(r.What))
	}
	writeCode(w, &r.TreeChange, "the tree to "+cmdline.QuoteText(r.Checkpoint))
	for _, m := range r.Moved {
		fmt.Fprintf(w, "%s the fork %s to %s\n", would(&r.TreeChange, "Moved", "Would move"), cmdline.QuotePath(m.From), cmdline.QuotePath(m.To))
	}
	if t := r.Transcript; t != nil {
		fmt.Fprintf(w, "%s %s its bytes from %s", would(&r.TreeChange, "Gave", "Would give"), cmdline.QuotePath(t.Path), cmdline.QuotePath(t.From))
		if t.Saved != "" {
			fmt.Fprintf(w, "; the bytes it had are kept in %s", cmdline.QuotePath(t.Saved))
		}
		fmt.Fprintln(w)
	}
	if r.Resume != "" && !r.DryRun {
		fmt.Fprintf(w, "Open the fork with: %s\n", cmdline.QuoteText(r.Resume))
	}
	writeBackup(w, &r.TreeChange, r.Kind, failed)
}

// writeCode says what was, or would be, done to the tree (what names it),
// with the paths written, deleted and given another mode; nothing when the
// tree was left alone.
func writeCode(w io.Writer, tc *store.TreeChange, what string) {
	code := tc.Code
	if code == nil {
		return
	}
	renamed, folders := "", ""
	if code.Renamed > 0 { // only on a file system that folds names (macOS's)
		renamed = fmt.Sprintf(", %d renamed", code.Renamed)
	}
	if code.Folders > 0 {
		folders = fmt.Sprintf("; %s changed", count(code.Folders, "folder")) // (made, deleted, or given another mode)
	}
	// Files are counted (as a person counts a tree's), folders apart.
	fmt.Fprintf(w, "%s %s: %s written, %d deleted%s, %s, %d unchanged%s\n",
		would(tc, "Restored", "Would restore"), what, count(code.Written, "file"), code.Deleted, renamed,
		count(code.ModeChanged, "mode change"), code.Unchanged, folders)
	// lines prints what each of shown (a path, or a rename's two, quoted
	// already) tells about it.
	lines := func(verb string, n int, shown iter.Seq[string]) {
		i := 0
		for s := range shown {
			if !tc.DryRun && i == listCap {
				fmt.Fprintf(w, "  %-6s … and %d more (--json lists them all)\n", verb, n-listCap)
				break
			}
			fmt.Fprintf(w, "  %-6s %s\n", verb, s)
			i++
		}
	}
	lines("write", code.WrittenList.Len(), quoteEach(code.WrittenList.All()))
	lines("delete", code.DeletedList.Len(), quoteEach(code.DeletedList.All()))
	lines("chmod", code.ModeList.Len(), quoteEach(code.ModeList.All()))
	var renames []string
	for _, rn := range code.RenamedList {
		renames = append(renames, cmdline.QuotePath(rn.From)+" -> "+cmdline.QuotePath(rn.To))
	}
	lines("rename", len(renames), slices.Values(renames))
	for _, l := range []*snap.PathList{&code.WrittenList, &code.DeletedList, &code.ModeList} {
		if err := l.Err(); err != nil {
			fmt.Fprintf(w, "  (the list stops here: %s)\n", cmdline.QuoteText(err.Error()))
		}
	}
	for _, p := range code.Spared {
		fmt.Fprintf(w, "  kept   %s (ignored by the checkpoint's rules)\n", cmdline.QuotePath(p))
	}
	for _, p := range code.Unreadable {
		fmt.Fprintf(w, "  kept   %s (could not be read, now or when the checkpoint was taken)\n", cmdline.QuotePath(p))
	}
	for _, p := range code.Inputs {
		fmt.Fprintf(w, "  kept   %s (the snapshot's own file)\n", cmdline.QuotePath(p))
	}
}

// writeBackup names the backup checkpoint a command of kind took, and the
// command that reverts it (see undoHint).
func writeBackup(w io.Writer, tc *store.TreeChange, kind store.RestoreKind, failed bool) {
	if tc.Backup != "" {
		fmt.Fprintf(w, "Backup checkpoint %s%s\n", cmdline.QuoteText(tc.Backup), undoHint(kind, failed))
	}
}

// quotePaths joins paths, each shown as git shows a name (cmdline.QuotePath).
func quotePaths(paths []string, sep string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = cmdline.QuotePath(p)
	}
	return strings.Join(q, sep)
}

// quoteEach is paths, each as git shows a name (cmdline.QuotePath).
func quoteEach(paths iter.Seq[string]) iter.Seq[string] {
	return func(yield func(string) bool) {
		for p := range paths {
			if !yield(cmdline.QuotePath(p)) {
				return
			}
		}
	}
}

// closeLists removes the temporary files a restore's longest lists were
// written to (see snap.PathList), once they are printed.
func closeLists(tc *store.TreeChange) {
	if tc.Code != nil {
		tc.Code.Close()
	}
}

// writeCut says where a dry run would cut the conversation, and what it
// would write.
func writeCut(w io.Writer, c *store.Cut) {
	where := ""
	switch {
	case c.Before != "":
		where = fmt.Sprintf(" before the prompt «%s»", cmdline.QuoteText(oneLine(c.Before, 60)))
		if c.N > 0 {
			where += fmt.Sprintf(" (the %s most recent)", ordinal(c.N))
		}
	case c.After != "":
		where = fmt.Sprintf(" after the prompt «%s»", cmdline.QuoteText(oneLine(c.After, 60)))
	}
	if c.How == store.ContextInPlace {
		fmt.Fprintf(w, "Would cut the conversation%s: %s back to byte %d of %d (%d bytes removed), behind a backup in transcript-backup/\n",
			where, cmdline.QuotePath(c.Transcript), c.Offset, c.Size, max(c.Size-c.Offset, 0))
		return
	}
	fmt.Fprintf(w, "Would fork the conversation%s: bytes 0 to %d of %d of %s\n", where, c.Offset, c.Size, cmdline.QuotePath(c.Transcript))
	if c.Fork != "" {
		fmt.Fprintf(w, "  fork   %s (a new session; its id is drawn when it is written)\n", cmdline.QuotePath(c.Fork))
	} else {
		fmt.Fprintf(w, "  fork   a new %s session, imported\n", cmdline.QuoteText(orNone(c.Agent)))
	}
	if c.Method == "snapshot" {
		fmt.Fprintf(w, "  bytes  from the checkpoint's copy: the transcript no longer holds them\n")
	}
}

// ordinal is 1st, 2nd, 3rd, 4th, …
func ordinal(n int) string {
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
	return fmt.Sprintf("%d%s", n, suffix)
}

// undoHint names the command that reverts what a command of kind did,
// when there is one for sure: undo-restore reverts a restore, undo, back,
// revert or redo that was recorded (a restore that failed too: it is
// recorded before it changes anything); redo puts back an undo-restore. An
// undo-restore or redo is recorded when it finishes: one that failed names
// no command.
func undoHint(kind store.RestoreKind, failed bool) string {
	undo := kind == store.KindUndoRestore || kind == store.KindRedo
	switch {
	case undo && failed:
		return " holds the tree as it was before."
	case kind == store.KindUndoRestore:
		return "; 'rewind redo' puts it back."
	}
	return "; 'rewind undo-restore' reverts this."
}

// undoVerb says what an undo-restore or a redo (kind) did, or in a plan
// would do.
func undoVerb(k store.RestoreKind, plan bool) string {
	switch {
	case k == store.KindRedo && plan:
		return "Would redo"
	case k == store.KindRedo:
		return "Redid"
	case plan:
		return "Would undo"
	}
	return "Undid"
}

func (c *restoreCmd) doc() doc {
	return doc{
		args:    "<cp> [-- <path>...]",
		summary: "restore code and/or chat from a checkpoint",
		text: `Restores the tree exactly and the conversation as a fork (a new session
beside the transcript), or only one of them. A backup checkpoint is taken first
and the restore recorded, so 'rewind undo-restore' reverts it. On a terminal it
shows what it would write, delete and fork, and asks first; --dry-run only
shows it. A restore that would change nothing (the tree already the
checkpoint's, no fork asked for, no bytes to cut) says so and takes no backup.

Paths after -- restore only those files and folders (git's pathspecs: relative
to the current folder, wildcards, :(glob), :(exclude) or :!PATH, :/PATH from
the project's root); the rest of the tree and the conversation are left as
they are. A path that names nothing in the checkpoint or the tree is refused.`,
		examples: []string{
			"rewind restore @2 --code-only",
			"rewind restore @2 --context-only --dry-run",
			"rewind restore @3 -- src/parser.go docs   # those paths only",
			"rewind restore ':/add the cache' -- '*.go' ':!vendor'",
		},
	}
}
