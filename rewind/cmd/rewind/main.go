// Command rewind checkpoints a project's code and its AI agent's
// conversation together and rewinds either or both. See rewind.dev/rewind/cli
// for the synopsis and rewind(1) for the manual.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"rewind.dev/rewind/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
