package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
)

// detectConfig is `rewind-jsonl detect FILE`.
type detectConfig struct {
	env *env
}

func newDetectCmd(e *env) *ffcli.Command {
	c := &detectConfig{env: e}
	return newSub("detect", "FILE",
		"tell which agent wrote FILE",
		"Prints {\"type\":\"agent\",\"agent\":…,\"confidence\":…} from the first 64 KiB and the path.\n"+
			"confidence is between 0 and 1. Exits 1 when no agent fits.", c)
}

func (c *detectConfig) RegisterFlags(fs *flag.FlagSet) {}

type detectOut struct {
	Type string `json:"type"`
	jsonl.Detection
}

func (c *detectConfig) Exec(ctx context.Context, args []string) error {
	path, err := onePath("detect", args)
	if err != nil {
		return err
	}
	t, err := jsonl.Open(path, nil)
	if err != nil {
		return err
	}
	defer t.Close()
	det, err := t.Detect()
	if err != nil {
		return err
	}
	if det.Dialect == nil {
		return cmdline.WithHint(fmt.Errorf("cannot tell which agent wrote %s", path),
			"the known agents are "+strings.Join(jsonl.DialectNames(), ", ")+"; pass --agent to the other commands")
	}
	return c.env.emit(detectOut{Type: "agent", Detection: det})
}
