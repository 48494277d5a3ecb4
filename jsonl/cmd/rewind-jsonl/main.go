// Command rewind-jsonl reads AI coding agents' transcripts: cursors, verification, turns found
// from the tail, and cut offsets for forks. See rewind-jsonl(1) and package rewind.dev/jsonl/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"rewind.dev/jsonl/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
