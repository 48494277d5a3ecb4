package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
)

// verifyConfig is `rewind-jsonl verify FILE < cursor.json`.
type verifyConfig struct {
	env *env
}

func newVerifyCmd(e *env) *ffcli.Command {
	c := &verifyConfig{env: e}
	return newSub("verify", "FILE < cursor.json",
		"tell whether FILE still extends the bytes a cursor was taken on",
		"Reads a cursor (the output of rewind-jsonl cursor) on stdin and prints\n"+
			"{\"type\":\"verify\",\"extends\":…,\"reason\":…}. Exit status 3 when FILE does not extend it.", c)
}

func (c *verifyConfig) RegisterFlags(fs *flag.FlagSet) {}

type verifyOut struct {
	Type string `json:"type"`
	jsonl.Verification
}

// maxCursorJSON bounds what verify reads from stdin.
const maxCursorJSON = 1 << 20

func (c *verifyConfig) Exec(ctx context.Context, args []string) error {
	path, err := onePath("verify", args)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(c.env.stdin, maxCursorJSON))
	if err != nil {
		return fmt.Errorf("read cursor from stdin: %w", err)
	}
	cur, err := jsonl.ParseCursor(data)
	if err != nil {
		return cmdline.WithHint(cmdline.Usagef("stdin: %w", err), "pipe the output of rewind-jsonl cursor FILE into verify")
	}
	t, err := jsonl.Open(path, nil)
	if err != nil {
		return err
	}
	defer t.Close()
	v, err := t.Verify(cur)
	if err != nil {
		return err
	}
	if err := c.env.emit(verifyOut{Type: "verify", Verification: v}); err != nil {
		return err
	}
	if !v.Extends {
		return cmdline.Exit(exitNotExtends)
	}
	return nil
}
