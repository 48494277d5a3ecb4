package cli

import (
	"context"
	"flag"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
)

// atConfig is `rewind-jsonl at --event ID FILE`.
type atConfig struct {
	env   *env
	agent agentFlag
	event string
}

func newAtCmd(e *env) *ffcli.Command {
	c := &atConfig{env: e}
	return newSub("at", "--event ID FILE [--agent A]",
		"print the cut before an event, which is removed with all after it",
		"Prints {\"type\":\"boundary\",\"offset\":…,\"events_kept\":…,\"events_removed\":…}. Events are\n"+
			"complete lines holding a JSON object. Exit status 4 when no line has the id.", c)
}

func (c *atConfig) RegisterFlags(fs *flag.FlagSet) {
	c.agent.register(fs)
	fs.StringVar(&c.event, "event", "", "the event id (each agent's id field: "+idFields()+")")
}

func (c *atConfig) Exec(ctx context.Context, args []string) error {
	if c.event == "" {
		return cmdline.WithHint(cmdline.Usagef("missing --event ID"), "run rewind-jsonl at --event <uuid> FILE")
	}
	path, err := onePath("at", args)
	if err != nil {
		return err
	}
	t, err := c.agent.open(path)
	if err != nil {
		return err
	}
	defer t.Close()
	cut, err := t.At(ctx, c.event)
	if err != nil {
		return err
	}
	return c.env.emit(jsonl.EventCutLine{Type: "boundary", EventCut: cut})
}

// idFields names each dialect's event id field, e.g. "claude: uuid; codex: none; …".
func idFields() string {
	var parts []string
	for _, d := range jsonl.Dialects() {
		f := d.IDField
		if f == "" {
			f = "none"
		}
		parts = append(parts, d.Name+": "+f)
	}
	return strings.Join(parts, "; ")
}
