// Command rewind-hook is Rewind's hook for Claude Code and Droid: it reads
// the agent's hook JSON on stdin and has rewind keep checkpoints. See
// rewind.dev/hookd/cli for the synopsis and rewind-hook(1) for the manual.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"rewind.dev/hookd/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
