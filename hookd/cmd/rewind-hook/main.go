// Command rewind-hook is Rewind's hook for Claude Code and Droid: it reads
// the agent's hook JSON on stdin and has rewind keep checkpoints. See
// rewind.dev/hookd/cli for the synopsis and rewind-hook(1) for the manual.
package main

import (
	"os"

	"rewind.dev/hookd/cli"
	"rewind.dev/internal/cmdline"
)

func main() {
	os.Exit(cmdline.Main(cli.Main))
}
