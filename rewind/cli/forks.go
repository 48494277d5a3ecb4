package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

type forksCmd struct{ common }

func (c *forksCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

// forkState is where a fork is: at its path, moved aside by an
// undo-restore, or gone.
type forkState string

const (
	forkPresent forkState = "present"
	forkMoved   forkState = "moved"
	forkGone    forkState = "gone"
)

// forkJSON is one line of forks list --json, and forks show --json.
type forkJSON struct {
	Type    string            `json:"type"` // "fork"
	Fork    *store.ForkRecord `json:"fork"`
	Restore string            `json:"restore"` // the history entry that wrote it
	At      time.Time         `json:"at"`
	State   forkState         `json:"state"`
	MovedTo string            `json:"moved_to,omitempty"`
	// Open is the command that opens the fork, when it is present; BringBack
	// says how to put it back, when it was moved aside.
	Open      string `json:"open,omitempty"`
	BringBack string `json:"bring_back,omitempty"`
}

func (c *forksCmd) Exec(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		args = []string{"list"} // (as git stash lists)
	}
	if len(args) == 1 && args[0] == "prune" {
		return c.prune(e)
	}
	if (args[0] != "list" && args[0] != "show") || (args[0] == "show") != (len(args) == 2) || len(args) > 2 {
		return cmdline.Usagef("use 'rewind forks list', 'rewind forks show <session-id>' or 'rewind forks prune'")
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	h, err := s.History()
	if err != nil {
		return err
	}
	var forks []forkJSON
	for _, f := range h.Forks() {
		if args[0] == "show" && !strings.HasPrefix(f.SessionID, args[1]) {
			continue
		}
		forks = append(forks, describeFork(&h, f))
	}
	if args[0] == "show" {
		switch {
		case len(forks) == 0:
			return cmdline.WithHint(fmt.Errorf("no fork with session id %q", args[1]), "'rewind forks list' shows them")
		case len(forks) > 1:
			return cmdline.WithHint(fmt.Errorf("session id %q is ambiguous: it starts %d forks' ids", args[1], len(forks)), "give more of it")
		}
		if c.json {
			return e.json(forks[0])
		}
		return showFork(e, forks[0], &h)
	}
	if c.json {
		for _, f := range forks {
			if err := e.json(f); err != nil {
				return err
			}
		}
		return nil
	}
	t := &table{header: []string{"SESSION", "WHEN", "FROM", "AT BYTE", "STATE", "TITLE"}, flex: 5}
	for _, f := range forks {
		t.rows = append(t.rows, []string{f.Fork.SessionID, ago(f.At), cmdline.QuotePath(filepath.Base(f.Fork.ParentTranscript)), fmt.Sprint(f.Fork.Offset), string(f.State), f.Fork.Title})
	}
	return t.write(e, e.width())
}

// prune takes out of the agents' indexes of session names the titles
// Rewind wrote for forks that are gone, for every store of the user's
// (store.ForgetGoneForkTitles): it needs no project.
func (c *forksCmd) prune(e *env) error {
	done, err := store.ForgetGoneForkTitles()
	for _, d := range done {
		if c.json {
			if err := e.json(d); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(e.stdout, "Took %s of gone forks out of %s\n", count(d.Removed, "title"), cmdline.QuotePath(d.Index))
	}
	return err
}

// describeFork says where f is and what opens it or brings it back.
func describeFork(h *store.History, f store.ForkState) forkJSON {
	out := forkJSON{Type: "fork", Fork: &f.ForkRecord, Restore: f.Entry.ID, At: f.Entry.At, State: forkPresent}
	switch {
	case f.Gone():
		out.State, out.MovedTo = forkGone, f.Removed
	case f.Removed != "":
		out.State, out.MovedTo = forkMoved, f.Removed
		// redo brings it back only when the undo-restore that moved it is the one redo reverts.
		if r := h.Redoable(); r != nil && r.ID == f.Last.ID {
			out.BringBack = "rewind redo"
		} else {
			to := f.Path
			if dir := filepath.Dir(f.Path); filepath.Base(dir) == f.SessionID {
				to = dir // a fork that is a folder of its own (Copilot) moved whole
			}
			out.BringBack = "mv " + cmdline.ShellQuote(f.Removed) + " " + cmdline.ShellQuote(to)
		}
	default:
		out.Open = store.ResumeHint(f.Agent, f.SessionID)
	}
	return out
}

// showFork prints f for a person: the history's ids, titles and commands
// through cmdline.QuoteText, its paths through cmdline.QuotePath.
func showFork(e *env, f forkJSON, h *store.History) error {
	tw := e.table()
	r := f.Fork
	fmt.Fprintf(tw, "Session\t%s\n", cmdline.QuoteText(r.SessionID))
	fmt.Fprintf(tw, "File\t%s\n", cmdline.QuotePath(r.Path))
	what := f.Restore
	if en := h.Entry(f.Restore); en != nil {
		what = en.What(h)
	}
	fmt.Fprintf(tw, "Forked\t%s by %s\n", ago(f.At), cmdline.QuoteText(what))
	fmt.Fprintf(tw, "From\t%s\n", cmdline.QuotePath(r.ParentTranscript))
	fmt.Fprintf(tw, "At byte\t%d\n", r.Offset)
	fmt.Fprintf(tw, "Title\t%s\n", cmdline.QuoteText(orNone(r.Title)))
	switch f.State {
	case forkPresent:
		fmt.Fprintf(tw, "State\tpresent\n")
		fmt.Fprintf(tw, "Open\t%s\n", cmdline.QuoteText(f.Open))
	case forkMoved:
		fmt.Fprintf(tw, "State\tmoved aside by undo-restore to %s\n", cmdline.QuotePath(f.MovedTo))
		fmt.Fprintf(tw, "Bring back\t%s, then %s\n", cmdline.QuoteText(f.BringBack), cmdline.QuoteText(store.ResumeHint(r.Agent, r.SessionID)))
	case forkGone:
		where := r.Path
		if f.MovedTo != "" {
			where = f.MovedTo
		}
		fmt.Fprintf(tw, "State\tgone: %s no longer exists\n", cmdline.QuotePath(where))
	}
	return tw.Flush()
}

func (c *forksCmd) doc() doc {
	return doc{
		args:    "[list | show <session-id> | prune]",
		summary: "forks Rewind created",
		text: `list (what forks alone does): every fork the restore history records, newest first, with where it
came from and its state: present, moved (aside by undo-restore, into
transcript-backup/), or gone. show: one fork (a unique prefix of its session
id), with the command that opens it, or, when it was moved aside, how to bring
it back ('rewind redo' when that is what redo would do, else the mv to run).
prune: takes out of the agents' indexes of session names (Codex's
session_index.jsonl) the title lines Rewind wrote for forks that are gone
(neither at their path nor moved aside), for the forks of every store of
yours; the agent's own lines stay. install.sh --uninstall runs it.`,
		examples: []string{"rewind forks", "rewind forks show 7177182e"},
	}
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
