// Command fakeapi serves the fake Anthropic Messages API for trying a real agent CLI by hand:
// every reply echoes the newest prompt, and every request body is written to DIR as
// NNNN-<path>.json. It prints the base URL and serves until interrupted.
//
//	go run ./e2e/cmd/fakeapi DIR
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"rewind.dev/e2e/fakeapi"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fakeapi DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "fakeapi: error:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	srv, err := fakeapi.Start(func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply("echo: " + r.LastPrompt())
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Println(srv.URL)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	written := 0
	for {
		rec := srv.Recorded()
		for ; written < len(rec); written++ {
			name := fmt.Sprintf("%04d-%s.json", written, strings.ReplaceAll(strings.Trim(rec[written].Path, "/"), "/", "_"))
			if err := os.WriteFile(filepath.Join(dir, name), rec[written].Body, 0o644); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
