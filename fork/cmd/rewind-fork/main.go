// Command rewind-fork forks an agent session at a boundary, or cuts it back in place. See
// rewind.dev/fork/cli for the synopsis and rewind-fork(1) for the manual.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"rewind.dev/fork/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
