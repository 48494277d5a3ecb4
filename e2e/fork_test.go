//go:build e2e

package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/e2e/fakeapi"
)

// forkResult is what `rewind-fork create` prints.
type forkResult struct {
	Type       string `json:"type"`
	Path       string `json:"path"`
	SessionID  string `json:"session_id"`
	Bytes      int64  `json:"bytes"`
	EventsKept int    `json:"events_kept"`
	Method     string `json:"method"`
	Title      string `json:"title"`
}

// forkBack1 runs `rewind-jsonl back 1 T | rewind-fork create --from T` and checks the fork file:
// it starts with the transcript's bytes up to the boundary, sits beside it as <session_id>.jsonl,
// and the source is unchanged.
func forkBack1(t *testing.T, c *claude, transcript string) (forkResult, int64) {
	t.Helper()
	before, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	boundary := c.rewind(nil, "rewind-jsonl", "back", "1", transcript)
	var b struct {
		Type   string `json:"type"`
		Offset int64  `json:"offset"`
	}
	if err := json.Unmarshal(boundary, &b); err != nil || b.Type != "boundary" || b.Offset <= 0 {
		t.Fatalf("rewind-jsonl back 1: unexpected output %s (%v)", boundary, err)
	}
	out := c.rewind(boundary, "rewind-fork", "create", "--from", transcript)
	var f forkResult
	if err := json.Unmarshal(out, &f); err != nil || f.Type != "fork" {
		t.Fatalf("rewind-fork create: unexpected output %s (%v)", out, err)
	}
	if want := filepath.Join(filepath.Dir(transcript), f.SessionID+".jsonl"); f.Path != want {
		t.Errorf("fork path = %s, want %s", f.Path, want)
	}
	got, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(got, before[:b.Offset]) {
		t.Errorf("fork file does not start with the transcript's first %d bytes", b.Offset)
	}
	after, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(before) != sha256.Sum256(after) {
		t.Error("the source transcript changed")
	}
	return f, b.Offset
}

// TestForkResumesPrefix: a three-prompt session with tool calls (Write, Bash, Read+Edit) made
// with `claude -p` and two `--resume` runs, forked before the third prompt; resuming the fork
// sends the model the first two prompts (and their tool results) and nothing of the third.
//
// Established with the real client: the copied lines keep the old sessionId and the client
// resumes the fork all the same, appending its new lines under the fork's id to the fork file.
func TestForkResumesPrefix(t *testing.T) {
	const (
		p1 = "alpha: write greeting.txt"
		p2 = "bravo: list the files"
		p3 = "charlie: edit the greeting"
		p4 = "delta: what do you remember"
	)
	var c *claude
	c = newClaude(t, func(r *fakeapi.Request) fakeapi.Reply {
		if !r.HasTool("Write") {
			return fakeapi.TextReply("side request")
		}
		greeting := filepath.Join(c.proj, "greeting.txt")
		p := r.LastPrompt()
		call := r.Call
		switch p {
		case p1:
			if reply, ok := call(0, "Write", map[string]string{"file_path": greeting, "content": "hello\n"}); ok {
				return reply
			}
		case p2:
			if reply, ok := call(0, "Bash", map[string]string{"command": "ls", "description": "List files"}); ok {
				return reply
			}
		case p3:
			if reply, ok := call(0, "Read", map[string]string{"file_path": greeting}); ok {
				return reply
			}
			if reply, ok := call(1, "Edit", map[string]string{"file_path": greeting, "old_string": "hello", "new_string": "goodbye"}); ok {
				return reply
			}
		}
		return fakeapi.TextReply("done: " + p)
	})

	id := c.print(p1)
	if got := c.print(p2, "--resume", id); got != id {
		t.Fatalf("resume -p changed the session id: %s → %s", id, got)
	}
	c.print(p3, "--resume", id)
	if data, err := os.ReadFile(filepath.Join(c.proj, "greeting.txt")); err != nil || string(data) != "goodbye\n" {
		t.Fatalf("the scripted tools did not run: greeting.txt = %q, %v", data, err)
	}
	transcript := c.transcript(id)
	if _, err := os.Stat(transcript); err != nil {
		t.Fatalf("transcript not where expected: %v", err)
	}
	assertPrompts(t, c.lastConversation(), p1, p2, p3)

	f, _ := forkBack1(t, c, transcript)
	if f.Method != "prefix-copy" {
		t.Errorf("method = %q, want prefix-copy (the live transcript is unchanged)", f.Method)
	}
	if got := c.print(p4, "--resume", f.SessionID); got != f.SessionID {
		t.Errorf("resuming the fork reported session %s, want %s", got, f.SessionID)
	}
	req := c.lastConversation()
	assertPrompts(t, req, p1, p2, p4)
	if bytes.Contains(req.Raw, []byte(p3)) {
		t.Error("the request after resuming the fork mentions the third prompt")
	}
	for _, call := range []struct {
		prompt string
		n      int
		want   bool
	}{{p1, 0, true}, {p2, 0, true}, {p3, 0, false}, {p3, 1, false}} {
		if got := req.HasToolResult(fakeapi.ToolID(call.prompt, call.n)); got != call.want {
			t.Errorf("tool result of %q call %d in the resumed fork: %v, want %v", call.prompt, call.n, got, call.want)
		}
	}
	fork, err := os.ReadFile(f.Path)
	if err != nil || !bytes.Contains(fork, []byte(p4)) {
		t.Errorf("the resumed fork's new turn was not written to the fork file (%v)", err)
	}
}

// TestForkListedInPicker: an interactive session (sessions made with -p are not listed in the
// picker at all), forked before its last prompt, shows in `claude --resume`'s list as its own
// entry with rewind-fork's "[Fork] …" title, and picking it resumes the prefix.
//
// Established with the real client (2.1.197): without a title line the picker lists a fork by
// its first prompt; a {"type":"custom-title","customTitle":…,"sessionId":<fork id>} line makes it
// show that title; the copied lines' sessionId need not be rewritten for either.
func TestForkListedInPicker(t *testing.T) {
	const (
		p1 = "alpha one"
		p2 = "bravo two"
		p3 = "charlie three"
		p4 = "delta four"
	)
	c := newClaude(t, func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply("echo " + strings.ToUpper(r.LastPrompt()))
	})
	s := startScreen(t, c.proj, c.env(), c.exe)
	s.waitFor("for shortcuts")
	for _, p := range []string{p1, p2, p3} {
		s.typeLine(p)
		s.waitFor("echo " + strings.ToUpper(p))
	}
	s.keys("C-c")
	s.keys("C-c")
	s.waitExit()

	files, _ := filepath.Glob(filepath.Join(c.projectDir(), "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one transcript in %s, have %q", c.projectDir(), files)
	}
	f, _ := forkBack1(t, c, files[0])
	if !strings.HasPrefix(f.Title, "[Fork] ") {
		t.Fatalf("fork title = %q, want a [Fork] prefix", f.Title)
	}

	p := startScreen(t, c.proj, c.env(), c.exe, "--resume")
	text := p.waitFor(f.Title)
	p.waitFor(p3) // the original is still listed, by its last prompt
	t.Logf("picker:\n%s", strings.TrimRight(text, "\n "))
	// The fork is the newest session, so the picker selects it; move down to it otherwise.
	for i := 0; i < 10 && !selected(p.capture(), f.Title); i++ {
		p.keys("Down")
	}
	if !selected(p.capture(), f.Title) {
		t.Fatalf("could not select the fork in the picker:\n%s", p.capture())
	}
	p.keys("Enter")
	p.waitFor("echo " + strings.ToUpper(p2))
	p.typeLine(p4)
	p.waitFor("echo " + strings.ToUpper(p4))
	assertPrompts(t, c.lastConversation(), p1, p2, p4)
	// The interactive client queues transcript lines and may write them after the reply is on
	// screen (this failed on a fresh machine when read right away), so read the fork after exit.
	p.keys("C-c")
	p.keys("C-c")
	p.waitExit()
	fork, err := os.ReadFile(f.Path)
	if err != nil || !bytes.Contains(fork, []byte(p4)) {
		var holders []string
		all, _ := filepath.Glob(filepath.Join(c.projectDir(), "*.jsonl"))
		for _, name := range all {
			if data, _ := os.ReadFile(name); bytes.Contains(data, []byte(p4)) {
				holders = append(holders, filepath.Base(name))
			}
		}
		t.Errorf("picking the fork did not resume into the fork file %s (%v); %q is in %q", filepath.Base(f.Path), err, p4, holders)
	}
}

// selected reports whether the picker's cursor line (❯) shows title.
func selected(screen, title string) bool {
	for _, line := range strings.Split(screen, "\n") {
		if strings.Contains(line, "❯") && strings.Contains(line, title) {
			return true
		}
	}
	return false
}
