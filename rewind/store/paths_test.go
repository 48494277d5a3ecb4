package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTranscriptThroughASymlink: a transcript named through a symlink is
// recorded, and forked, where it really is.
func TestTranscriptThroughASymlink(t *testing.T) {
	t.Parallel()
	s := project(t)
	real := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(real, fixtureBytes(t), 0o644)
	link := filepath.Join(t.TempDir(), "link.jsonl")
	os.Symlink(real, link)
	c := save(t, s, SaveOptions{TranscriptPath: link})
	want, _ := filepath.EvalSymlinks(real)
	if c.Transcript.OriginalPath != want {
		t.Errorf("recorded %s, want the real path %s", c.Transcript.OriginalPath, want)
	}
	res, err := s.Back(ctx, BackOptions{N: 1, TranscriptPath: link})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(res.Fork.Path) != filepath.Dir(want) {
		t.Errorf("fork at %s, want it beside the real transcript %s", res.Fork.Path, want)
	}
}

// TestBackMissingTranscript: back on a transcript that does not exist says
// so, not that the conversation has no prompts.
func TestBackMissingTranscript(t *testing.T) {
	t.Parallel()
	s := project(t)
	_, err := s.Back(ctx, BackOptions{N: 1, TranscriptPath: filepath.Join(t.TempDir(), "gone.jsonl")})
	if err == nil || !strings.Contains(err.Error(), "no such file or directory") || strings.Contains(err.Error(), "prompts") {
		t.Fatalf("err = %v, want no such file", err)
	}
}
