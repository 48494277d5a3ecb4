package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"rewind.dev/rewind/store"
)

type forksCmd struct{ common }

func (c *forksCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *forksCmd) Exec(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "show") || (args[0] == "show") != (len(args) == 2) || len(args) > 2 {
		return usageError{"use 'rewind forks list' or 'rewind forks show <session-id>'"}
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	h, err := s.History()
	if err != nil {
		return err
	}
	var found bool
	tw := e.table()
	if args[0] == "list" && !c.json {
		fmt.Fprintln(tw, e.color("1", "SESSION\tWHEN\tFROM\tAT BYTE\tTITLE\tSTATE"))
	}
	for i := len(h.Entries) - 1; i >= 0; i-- {
		en := h.Entries[i]
		f := en.Fork
		if f == nil || (args[0] == "show" && !strings.HasPrefix(f.SessionID, args[1])) {
			continue
		}
		found = true
		state := "present"
		if f.Removed != "" {
			state = "moved to " + f.Removed
		} else if _, err := os.Stat(f.Path); errors.Is(err, os.ErrNotExist) {
			state = "gone"
		}
		if c.json {
			e.json(map[string]any{"type": "fork", "fork": f, "restore": en.ID, "at": en.At, "state": state})
			continue
		}
		if args[0] == "list" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", f.SessionID, ago(en.At), filepath.Base(f.ParentTranscript), f.Offset, oneLine(f.Title, 40), state)
			continue
		}
		fmt.Fprintf(tw, "Session\t%s\nFile\t%s\nForked\t%s by %s (%s)\nFrom\t%s\nAt byte\t%d\nTitle\t%s\nState\t%s\nOpen\t%s\n",
			f.SessionID, f.Path, ago(en.At), en.Kind, en.ID, f.ParentTranscript, f.Offset, orNone(f.Title), state, store.ResumeHint(f.Agent, f.SessionID))
		break
	}
	if args[0] == "show" && !found {
		return fmt.Errorf("no fork with session id %q; 'rewind forks list' shows them", args[1])
	}
	if !c.json {
		return tw.Flush()
	}
	return nil
}

func (c *forksCmd) doc() doc {
	return doc{
		args:     "list | show <session-id>",
		summary:  "forks Rewind created",
		examples: []string{"rewind forks list", "rewind forks show 7177182e"},
	}
}
