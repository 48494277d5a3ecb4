//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/e2e/fakeapi"
)

// TestClaudeNoStore: with the hooks installed and no `rewind init`, a project in a git work
// tree gets its store made by the first hook (the prompt is checkpointed); a project outside
// any work tree does not, and the person is told on Claude Code's screen, once, what to run.
func TestClaudeNoStore(t *testing.T) {
	c := newClaude(t, func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply("echo " + strings.ToUpper(r.LastPrompt()))
	})
	installRewind(t, c.home, c.env(), "--yes", "--agents", "claude")

	// Not a git work tree: nothing is made, and the screen says why.
	s := startScreen(t, c.proj, c.env(), c.exe)
	s.waitFor("for shortcuts")
	s.typeLine("hello there")
	screen := s.waitFor("echo HELLO THERE")
	if !strings.Contains(strings.Join(strings.Fields(screen), " "), "has no checkpoint store, so nothing is checkpointed; run 'rewind init' there") {
		t.Errorf("the screen does not tell that the project has no store:\n%s", screen)
	}
	t.Logf("screen:\n%s", strings.TrimRight(screen, "\n "))
	s.typeLine("again")
	screen = s.waitFor("echo AGAIN")
	if n := strings.Count(strings.Join(strings.Fields(screen), " "), "has no checkpoint store"); n != 1 {
		t.Errorf("the notice shows %d times, want once:\n%s", n, screen)
	}
	s.keys("C-c")
	s.keys("C-c")
	s.waitExit()
	if _, err := os.Stat(filepath.Join(c.proj, ".agent")); err == nil {
		t.Error("a store was made outside a git work tree")
	}

	// In a git work tree: the first prompt's hook makes the store at its top and checkpoints.
	sub := filepath.Join(c.proj, "src")
	os.MkdirAll(sub, 0o755)
	runIn(t, c.proj, c.env(), "git", "init", "-q")
	cmd := exec.Command(c.exe, "-p", "write nothing", "--dangerously-skip-permissions")
	cmd.Dir, cmd.Env = sub, c.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	var created, checkpoint bool
	for _, l := range readHookLog(t, c.home) {
		created = created || l.Created != ""
		checkpoint = checkpoint || l.Event == "UserPromptSubmit" && l.Action == "checkpoint"
	}
	// (In Rewind's home, the default: the repository's mark leads to it.)
	if _, err := os.Stat(filepath.Join(c.proj, ".git", "rewind-store")); err != nil || !created || !checkpoint {
		t.Errorf("no store made for the work tree's top, or no prompt checkpoint (mark: %v, created %v, checkpoint %v)", err, created, checkpoint)
	}
}

// TestClaudeRunsBack: `rewind back 1` run by Claude Code's own Bash tool, inside the second
// prompt, cuts before that prompt — whether the client has written the prompt's line yet
// (claude -p writes it early; the interactive client late): the running prompt counts as the
// newest either way.
func TestClaudeRunsBack(t *testing.T) {
	const (
		p1 = "alpha: write a.txt"
		p2 = "bravo: run rewind back"
	)
	for _, mode := range []string{"print", "interactive"} {
		t.Run(mode, func(t *testing.T) {
			var c *claude
			c = newClaude(t, func(r *fakeapi.Request) fakeapi.Reply {
				p := r.LastPrompt()
				var call fakeapi.ToolUse
				switch p {
				case p1:
					call = fakeapi.ToolUse{Name: "Write", Input: map[string]string{"file_path": filepath.Join(c.proj, "a.txt"), "content": "one\n"}}
				case p2:
					call = fakeapi.ToolUse{Name: "Bash", Input: map[string]string{"command": "rewind back 1 --json > back.json", "description": "Rewind"}}
				default:
					return fakeapi.TextReply("ok")
				}
				if id := fakeapi.ToolID(p, 0); !r.HasToolResult(id) {
					call.ID = id
					return fakeapi.Reply{Text: "Working.", ToolUses: []fakeapi.ToolUse{call}}
				}
				return fakeapi.TextReply("done " + strings.ToUpper(p))
			})
			installRewind(t, c.home, c.env(), "--yes", "--agents", "claude")
			runIn(t, c.proj, c.env(), "git", "init", "-q")
			if mode == "print" {
				id := c.print(p1)
				c.print(p2, "--resume", id)
			} else {
				s := startScreen(t, c.proj, c.env(), c.exe, "--dangerously-skip-permissions")
				// The client asks once to accept the bypass mode.
				s.waitFor("Yes, I accept")
				s.keys("Down")
				s.keys("Enter")
				s.waitFor("bypass permissions on")
				s.typeLine(p1)
				s.waitFor("done " + strings.ToUpper(p1))
				s.typeLine(p2)
				s.waitFor("done " + strings.ToUpper(p2))
				s.keys("C-c")
				s.keys("C-c")
				s.waitExit()
			}
			out, err := os.ReadFile(filepath.Join(c.proj, "back.json"))
			var res struct {
				Fork *struct {
					Path string `json:"path"`
				} `json:"fork"`
			}
			if err != nil || json.Unmarshal(out, &res) != nil || res.Fork == nil {
				t.Fatalf("rewind back 1 run by the agent: %v\n%s", err, out)
			}
			fork, err := os.ReadFile(res.Fork.Path)
			if err != nil {
				t.Fatal(err)
			}
			// Cut before the running prompt and the lines the client wrote for it (its queue
			// lines, which hold its text): the first prompt stays, the second is gone.
			if !strings.Contains(string(fork), p1) || strings.Contains(string(fork), p2) {
				t.Errorf("the fork should hold the first prompt and not the running one:\n%s", fork)
			}
		})
	}
}
