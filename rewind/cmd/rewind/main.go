// Command rewind checkpoints a project's code and its AI agent's
// conversation together and rewinds either or both. See rewind.dev/rewind/cli
// for the synopsis and rewind(1) for the manual.
package main

import (
	"os"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/cli"
)

func main() {
	// A run lives well under a second and holds a few MiB of manifest: let
	// the heap grow before collecting, within a soft limit under the 100 MiB
	// this tool promises to stay under, with room for what the runtime does
	// not count (its code, the kernel's tables). A tree of 230,000 files
	// needs most of it: under a lower limit the collector ran without pause
	// (see BoundHeap for a tree too big for it).
	cmdline.BoundHeap(88 << 20)
	os.Exit(cmdline.Main(cli.Main))
}
