package cli

import (
	"context"
	"flag"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/jsonl"
)

// cursorConfig is `rewind-jsonl cursor FILE`.
type cursorConfig struct {
	env        *env
	agent      agentFlag
	countLines bool
}

func newCursorCmd(e *env) *ffcli.Command {
	c := &cursorConfig{env: e}
	return newSub("cursor", "FILE [--agent A] [--count-lines]",
		"print where the transcript ends now, with hashes to verify it later",
		"Prints {\"type\":\"cursor\",…}: byte_offset_end (end of the last complete line), prefix_sha256\n"+
			"(first 64 KiB), tail_sha256 (64 KiB before byte_offset_end), last_event_id, lines (null\n"+
			"unless --count-lines, which reads the whole file). Reads only both ends of the file.", c)
}

func (c *cursorConfig) RegisterFlags(fs *flag.FlagSet) {
	c.agent.register(fs)
	fs.BoolVar(&c.countLines, "count-lines", false, "also count the complete lines (reads the whole file)")
}

func (c *cursorConfig) Exec(ctx context.Context, args []string) error {
	path, err := onePath("cursor", args)
	if err != nil {
		return err
	}
	t, err := c.agent.open(path)
	if err != nil {
		return err
	}
	defer t.Close()
	cur, err := t.Cursor(ctx, jsonl.CursorOptions{CountLines: c.countLines})
	if err != nil {
		return err
	}
	return c.env.emit(jsonl.CursorLine{Type: "cursor", Cursor: cur})
}
