package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

// On a terminal, diff says when there are no changes (a patch of none is
// empty elsewhere), and colours the patch as git does: headers bold, hunk
// headers cyan, lines taken away red, lines added green, each newline outside
// its colour.
func TestDiffOnATerminal(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	s, _, err := store.Init(dir, layout.ModeProject)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "f.txt")
	os.WriteFile(name, []byte("one\n"), 0o644)
	if _, err := s.Save(context.Background(), store.SaveOptions{Trigger: store.Trigger{Kind: store.TriggerManual}}); err != nil {
		t.Fatal(err)
	}
	diff := func() string {
		t.Helper()
		master, slave := openPTY(t)
		screen := make(chan string)
		go func() { b, _ := io.ReadAll(master); screen <- string(b) }()
		e := &env{stdin: strings.NewReader(""), stdout: slave, stderr: io.Discard, getenv: os.Getenv, colors: true}
		if err := run(context.Background(), e, []string{"diff", "@0", "-C", dir}); err != nil {
			t.Fatal(err)
		}
		slave.Close()
		return strings.ReplaceAll(<-screen, "\r\n", "\n")
	}
	if got := diff(); got != "No changes.\n" {
		t.Errorf("no changes: %q", got)
	}
	os.WriteFile(name, []byte("two\n"), 0o644)
	want := "\x1b[1mdiff --git a/f.txt b/f.txt\x1b[0m\n\x1b[1m--- a/f.txt\x1b[0m\n\x1b[1m+++ b/f.txt\x1b[0m\n" +
		"\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-one\x1b[0m\n\x1b[32m+two\x1b[0m\n"
	if got := diff(); got != want {
		t.Errorf("coloured:\n%q\nwant\n%q", got, want)
	}
}
