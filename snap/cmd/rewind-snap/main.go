// Command rewind-snap snapshots, diffs and restores a project tree. See
// rewind.dev/snap/cli for the synopsis and rewind-snap(1) for the manual.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"rewind.dev/snap/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
