// Command rewind-fork forks an agent session at a boundary, or cuts it back in place. See
// rewind.dev/fork/cli for the synopsis and rewind-fork(1) for the manual.
package main

import (
	"os"

	"rewind.dev/fork/cli"
	"rewind.dev/internal/cmdline"
)

func main() {
	os.Exit(cmdline.Main(cli.Main))
}
