// Command rewind-jsonl reads AI coding agents' transcripts: cursors, verification, turns found
// from the tail, and cut offsets for forks. See rewind-jsonl(1) and package rewind.dev/jsonl/cli.
package main

import (
	"os"

	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl/cli"
)

func main() {
	os.Exit(cmdline.Main(cli.Main))
}
