package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"rewind.dev/hookd"
	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

type listCmd struct {
	common
	all  bool
	n    int
	grep string
}

// listDefault is how many rows list shows when -n is not given (text only:
// --json lists every checkpoint unless -n says otherwise).
const listDefault = 20

func (c *listCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.all, "all", false, "also list the backups restores took (they have no @N: name them by id)")
	fs.IntVar(&c.n, "n", -1, fmt.Sprintf("list at most `N` checkpoints; 0 lists every one list shows, --all adding the restore backups (default %d, all with --json)", listDefault))
	fs.StringVar(&c.grep, "grep", "", "list only the checkpoints whose prompt or description contains `TEXT` (any case), as ':/TEXT' finds them")
}

func (c *listCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "list"); err != nil {
		return err
	}
	if c.n < -1 {
		return cmdline.Usagef("-n %d: want 0 (all) or more", c.n)
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	// Newest first, each checkpoint's metadata read only when its row is
	// shown: the text form's 20 rows cost 20 reads however large the store
	// (what is left is counted by name, backups among it too; a --grep
	// reads on, to count the matches it leaves out).
	ids, err := s.IDs()
	if err != nil {
		return err
	}
	limit := c.n
	if limit < 0 {
		limit = listDefault
		if c.json {
			limit = 0
		}
	}
	t := &table{header: []string{"", "ID", "AGE", "AGENT", "TRIGGER", "CHANGES", "PROMPT"}, colors: []string{"", "33"}, flex: 6, optional: []int{1}}
	n, shown, more, hidden := 0, 0, 0, 0
	for i := len(ids) - 1; i >= 0; i-- {
		if limit > 0 && shown >= limit && c.grep == "" { // (a search counts the matches it leaves out)
			more = i + 1
			break
		}
		cp, err := s.Load(ids[i])
		if err != nil {
			continue // not a checkpoint (validate says why)
		}
		pos := ""
		var np *int
		if !cp.Backup() {
			np = new(int)
			*np = n
			pos = fmt.Sprintf("@%d", n)
			n++
		}
		if c.grep != "" && !store.Mentions(cp, c.grep) {
			continue
		}
		if cp.Backup() && !c.all {
			hidden++
			continue
		}
		if limit > 0 && shown >= limit {
			more++
			continue
		}
		shown++
		if c.json {
			if err := e.json(newCheckpointJSON(cp, np)); err != nil {
				return err
			}
			continue
		}
		t.rows = append(t.rows, []string{pos, cp.ID, strings.TrimSuffix(ago(cp.CreatedAt), " ago"), agentOf(cp), triggerText(cp), changesText(cp), promptText(cp)})
	}
	if c.json {
		return nil
	}
	if shown == 0 && c.grep == "" {
		if hidden > 0 {
			return cmdline.WithHint(fmt.Errorf("no checkpoints but %d restore backup%s", hidden, plural(hidden)), "'rewind list --all' shows them")
		}
		return store.ErrNoCheckpoints
	}
	// A search that matches nothing prints nothing and succeeds, as git log
	// --grep does: the answer is the empty list.
	if shown > 0 {
		if err := t.write(e, e.width()); err != nil {
			return err
		}
	}
	var notes []string
	if more > 0 {
		notes = append(notes, fmt.Sprintf("%d more (-n 0 lists them)", more))
	}
	if hidden > 0 {
		notes = append(notes, fmt.Sprintf("%d restore backup%s not shown (--all)", hidden, plural(hidden)))
	}
	if len(notes) > 0 {
		fmt.Fprintf(e.stdout, "… %s\n", strings.Join(notes, "; "))
	}
	return nil
}

// agentOf names the agent whose hook or transcript the checkpoint holds.
func agentOf(cp *store.Checkpoint) string {
	if cp.Trigger.Agent != "" {
		return cp.Trigger.Agent
	}
	if cp.Transcript != nil {
		return cp.Transcript.Agent
	}
	return ""
}

// triggerWords says in plain words what took cp: "prompt", "before edit
// main.go", "manual", "session start", "restore backup"; exactly, for
// --json.
func triggerWords(cp *store.Checkpoint) string {
	w, file := trigger(cp)
	if file != "" {
		w += " " + file
	}
	return w
}

// triggerText is triggerWords for a person: the file named as git names it
// (cmdline.QuotePath), the rest through cmdline.QuoteText.
func triggerText(cp *store.Checkpoint) string {
	w, file := trigger(cp)
	w = cmdline.QuoteText(w)
	if file != "" {
		w += " " + cmdline.QuotePath(file)
	}
	return w
}

// trigger is what triggerWords says: its words, and the name of the file a
// tool event named ("" for none).
func trigger(cp *store.Checkpoint) (words, file string) {
	t := cp.Trigger
	switch t.Kind {
	case store.TriggerManual:
		return "manual", ""
	case store.TriggerPreRestore:
		return "restore backup", ""
	}
	var w string
	switch t.Event {
	case hookd.EventSessionStart:
		w = "session start"
	case hookd.EventPrompt:
		return "prompt", ""
	case hookd.EventPreTool:
		w = "before " + toolWords(t.Agent, t.Tool)
	case hookd.EventPostTool:
		w = "after " + toolWords(t.Agent, t.Tool)
	case hookd.EventStop:
		w = "reply done"
	case hookd.EventPreCompact:
		w = "before compaction"
	case hookd.EventSessionEnd:
		w = "session end"
	case "":
		w = string(t.Kind)
	default:
		w = t.Event
	}
	if t.File != "" {
		file = filepath.Base(t.File)
	}
	return w, file
}

// toolWords names a tool by its class in the agent's profile: "edit",
// "shell", else "tool".
func toolWords(agent, tool string) string {
	if a, err := hookd.LookupAgent(agent); err == nil {
		switch a.ToolClass(tool) {
		case hookd.ToolsEdit:
			return "edit"
		case hookd.ToolsShell:
			return "shell"
		}
	}
	return "tool"
}

func changesText(cp *store.Checkpoint) string {
	if cp.Snapshot.ReusedFrom != "" {
		return "="
	}
	ch := cp.Changes
	return fmt.Sprintf("+%d ~%d -%d", ch.Added, ch.Modified, ch.Deleted)
}

// promptText is list's last column, promptOf for a person: a description
// in quotes, on one line, cut; a pin label first.
func promptText(cp *store.Checkpoint) string {
	s, described := promptOf(cp)
	if described {
		s = `"` + s + `"`
	}
	s = oneLine(s, 200)
	if cp.Pinned != "" {
		s = strings.TrimSpace("[pinned: " + cp.Pinned + "] " + s)
	}
	return s
}

// promptOf is what list's last column says, as data: for a checkpoint taken
// at a prompt, that prompt (the tree is as it was before it ran); for a
// manual one, its description (described); otherwise the newest prompt of
// the transcript when it was taken.
func promptOf(cp *store.Checkpoint) (s string, described bool) {
	switch {
	case cp.Trigger.Event == hookd.EventPrompt && cp.Trigger.Prompt != "":
		return cp.Trigger.Prompt, false
	case cp.Description != "":
		return cp.Description, true
	case cp.Transcript != nil:
		return cp.Transcript.LastPrompt, false
	}
	return "", false
}

func (c *listCmd) doc() doc {
	return doc{
		summary: "list checkpoints, newest first",
		text: `Columns: @N (what restore, diff and show take), id, age, agent, what took
it in plain words (prompt, before edit FILE, manual, session start, …), the
changes since the previous checkpoint (+added ~modified -deleted, = unchanged),
and the prompt: for a prompt's checkpoint that prompt (the tree before it),
for a manual one its description, else the newest prompt when it was taken.
The prompt column is cut to fit the terminal ($COLUMNS, else its width), and
the id column is left out when the prompt would get fewer than 30 columns.
--grep TEXT keeps the rows whose prompt or description contains TEXT, with
their @N: the checkpoints of every session of the project, forks included;
none is no row, and success, as with git log --grep. -n 0 lists every
checkpoint list shows; the restore backups are left out unless --all.`,
		examples: []string{
			"rewind list",
			"rewind list --grep 'add the cache'",
			"rewind list -n 0 --all   # every checkpoint, restore backups too",
			"rewind list --json | jq -r .checkpoint.id",
		},
	}
}
