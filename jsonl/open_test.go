//go:build unix

package jsonl

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenRefusesNonRegularFilesWithoutBlocking: a FIFO with no writer, or
// a folder, given as a transcript is refused at once, naming what it is.
func TestOpenRefusesNonRegularFilesWithoutBlocking(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "t.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{fifo: "a FIFO", t.TempDir(): "a folder"} {
		done := make(chan error, 1)
		go func() {
			tr, err := Open(p, nil)
			if err == nil {
				tr.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file ("+want+")") {
				t.Errorf("Open(%s): %v, want a refusal naming %s", p, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) blocked", p)
		}
	}
}
