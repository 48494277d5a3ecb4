package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/jsonl"
)

// detectConfig is `rewind-jsonl detect FILE`.
type detectConfig struct {
	env *env
}

func newDetectCmd(e *env) *ffcli.Command {
	c := &detectConfig{env: e}
	return newSub(e, "detect", "rewind-jsonl detect FILE",
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
		return &exitError{code: exitFailure, err: err, hint: "check that the path names a readable transcript file"}
	}
	defer t.Close()
	det, err := t.Detect()
	if err != nil {
		return err
	}
	if det.Dialect == nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("cannot tell which agent wrote %s", path),
			hint: "the known agents are " + strings.Join(jsonl.DialectNames(), ", ") + "; pass --agent to the other commands"}
	}
	return c.env.emit(detectOut{Type: "agent", Detection: det})
}
