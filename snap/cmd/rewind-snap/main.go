// Command rewind-snap snapshots, diffs and restores a project tree. See
// rewind.dev/snap/cli for the synopsis and rewind-snap(1) for the manual.
package main

import (
	"os"

	"rewind.dev/internal/cmdline"
	"rewind.dev/snap/cli"
)

func main() {
	// A run lives well under a second and holds a few MiB of manifest: let
	// the heap grow before collecting, within a soft limit far below the
	// 100 MiB this tool promises to stay under (see BoundHeap for a tree
	// too big for it).
	cmdline.BoundHeap(64 << 20)
	os.Exit(cmdline.Main(cli.Main))
}
