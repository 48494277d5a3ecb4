package cmdline

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main runs a command's importable Main with the process's arguments and streams, under a
// context that SIGINT and SIGTERM cancel, and returns its exit status for main to exit with:
//
//	func main() { os.Exit(cmdline.Main(cli.Main)) }
//
// Nothing else exits, so the command's defers always run.
func Main(run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}
