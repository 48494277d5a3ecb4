//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/e2e/fakeapi"
)

// TestClaudeToldItsCodeWasRewound: in an interactive Claude Code session (tmux) two prompts
// write and then edit a file; `rewind back 1 --both`, run beside the session, which stays
// open, rewinds the code for a fork. The next prompt typed in that still-open session shows,
// once, on its screen, that the code was rewound for the fork and how to get it back; the
// prompt after it does not show it again, and the fork's own session is never told.
func TestClaudeToldItsCodeWasRewound(t *testing.T) {
	const (
		p1 = "alpha: write notes.txt"
		p2 = "bravo: edit notes.txt"
		p3 = "charlie: carry on here"
		p4 = "delta: and on"
		p5 = "echo: in the fork"
	)
	var c *claude
	c = newClaude(t, func(r *fakeapi.Request) fakeapi.Reply {
		if !r.HasTool("Write") {
			return fakeapi.TextReply("side request")
		}
		notes := filepath.Join(r.Folder(), "notes.txt")
		p := r.LastPrompt()
		switch p {
		case p1:
			if reply, ok := r.Call(0, "Write", map[string]string{"file_path": notes, "content": "one\n"}); ok {
				return reply
			}
		case p2:
			if reply, ok := r.Call(0, "Read", map[string]string{"file_path": notes}); ok {
				return reply
			}
			if reply, ok := r.Call(1, "Edit", map[string]string{"file_path": notes, "old_string": "one", "new_string": "two"}); ok {
				return reply
			}
		}
		return fakeapi.TextReply("done " + strings.ToUpper(p))
	})
	rewind := filepath.Join(installRewind(t, c.home, c.env(), "--yes", "--agents", "claude"), "rewind")
	env := c.env()
	runIn(t, c.proj, env, "git", "init", "-q")
	runIn(t, c.proj, env, rewind, "init")

	s := startScreen(t, c.proj, env, c.exe, "--dangerously-skip-permissions")
	s.waitFor("Yes, I accept") // the client asks once to accept the bypass mode
	s.keys("Down")
	s.keys("Enter")
	s.waitFor("bypass permissions on")
	s.typeLine(p1)
	s.waitFor("done " + strings.ToUpper(p1))
	s.typeLine(p2)
	s.waitFor("done " + strings.ToUpper(p2))
	if b, _ := os.ReadFile(filepath.Join(c.proj, "notes.txt")); string(b) != "two\n" {
		t.Fatalf("after the second prompt notes.txt = %q, want two", b)
	}

	var back struct {
		Checkpoint string `json:"checkpoint"`
		Fork       *struct {
			SessionID string `json:"session_id"`
		} `json:"fork"`
	}
	out := runIn(t, c.proj, env, rewind, "back", "1", "--both", "--json")
	if err := json.Unmarshal(out, &back); err != nil || back.Fork == nil {
		t.Fatalf("rewind back 1 --both --json: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(c.proj, "notes.txt")); string(b) != "one\n" {
		t.Fatalf("after back 1 --both notes.txt = %q, want one", b)
	}

	s.typeLine(p3)
	screen := strings.Join(strings.Fields(s.waitFor("done "+strings.ToUpper(p3))), " ")
	t.Logf("screen after the prompt in the session left behind:\n%s", screen)
	for _, want := range []string{
		"the code of this project was rewound to checkpoint " + back.Checkpoint + " for the fork " + back.Fork.SessionID,
		"(rewind back 1 --both,", "this session's conversation was not",
		"'rewind undo-restore' brings the code back", "'claude --resume " + back.Fork.SessionID + "' opens the fork",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen does not show %q", want)
		}
	}
	s.typeLine(p4)
	screen = strings.Join(strings.Fields(s.waitFor("done "+strings.ToUpper(p4))), " ")
	if n := strings.Count(screen, "was rewound to checkpoint"); n > 1 {
		t.Errorf("the notice shows %d times, want once:\n%s", n, screen)
	}
	s.keys("C-c")
	s.keys("C-c")
	s.waitExit()

	if got := c.print(p5, "--resume", back.Fork.SessionID); got != back.Fork.SessionID {
		t.Errorf("resuming the fork reported session %s, want %s", got, back.Fork.SessionID)
	}
	var told []hookLog
	session := ""
	for _, l := range readHookLog(t, c.home) {
		if l.Error != "" {
			t.Errorf("hook error: %+v", l)
		}
		if session == "" && l.Event == "UserPromptSubmit" {
			session = l.SessionID
		}
		if l.Rewound {
			told = append(told, l)
		}
	}
	if len(told) != 1 || told[0].SessionID != session || told[0].Event != "UserPromptSubmit" {
		t.Errorf("hook.log: told %+v, want once, at a prompt of the session left behind (%s)", told, session)
	}
}
