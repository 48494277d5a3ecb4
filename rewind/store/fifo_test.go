//go:build unix

package store

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"rewind.dev/hookd"
)

// within fails the test when fn has not returned after d: a blocked open
// must not hang the suite.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v (blocked)", what, d)
	}
}

// TestNonRegularTranscriptsNeverBlock: a FIFO (or a folder) given as the
// transcript is refused at once by save and back, naming it; recorded by a
// hook, the hook still takes its checkpoint of the tree, records why the
// transcript is not in it, and later hooks do too.
func TestNonRegularTranscriptsNeverBlock(t *testing.T) {
	s := envProject(t)
	fifo := agentTranscript(t, "t.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	folder := t.TempDir()
	for _, p := range []string{fifo, folder} {
		within(t, 5*time.Second, "save", func() {
			_, err := s.Save(ctx, SaveOptions{TranscriptPath: p})
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("save --transcript %s: %v, want a refusal", p, err)
			}
		})
		within(t, 5*time.Second, "back", func() {
			_, err := s.Back(ctx, BackOptions{N: 1, TranscriptPath: p})
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("back --transcript %s: %v, want a refusal", p, err)
			}
		})
	}
	for i := range 2 {
		within(t, 5*time.Second, "a hook", func() {
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			resp, err := s.Hook(c, hookd.Request{Version: 1, Event: "UserPromptSubmit", Agent: "claude", ProjectDir: s.Project,
				SessionID: "s1", TranscriptPath: fifo, Checkpoint: hookd.CheckpointAlways})
			if err != nil || resp.Action != "checkpoint" {
				t.Fatalf("hook %d: %+v %v, want a checkpoint", i, resp, err)
			}
			cp, err := s.Load(resp.Checkpoint)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Transcript == nil || !strings.Contains(cp.Transcript.Problem, "not a regular file") {
				t.Errorf("hook %d: the checkpoint does not say why it holds no transcript: %+v", i, cp.Transcript)
			}
		})
	}
	if _, err := os.Stat(fifo); err != nil {
		t.Fatal(err)
	}
}
