//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/e2e/fakeapi"
)

// TestClaudeFindByWords (issue 19.1 and 19.3) with the real Claude Code and the hooks install.sh
// registers: checkpoints named by the words of the prompt they were taken at (list --grep, diff
// and restore ':/TEXT'), a restore of one path that leaves the rest of the tree alone and
// undo-restore reverting it, and back ':/TEXT' --both — in the session, then in the fork it
// wrote, where the prompt found is one the fork holds from its parent and the code goes to the
// parent session's checkpoint (lineage). Each fork resumes with exactly the prompts before the
// one named.
func TestClaudeFindByWords(t *testing.T) {
	const (
		p1 = "alpha: write notes.txt"
		p2 = "bravo: edit notes.txt"
		p3 = "charlie: write other.txt"
		p4 = "delta: delete notes.txt"
		p5 = "echo: what do you remember"
		p6 = "foxtrot: and now"
	)
	var c *claude
	c = newClaude(t, func(r *fakeapi.Request) fakeapi.Reply {
		if !r.HasTool("Write") {
			return fakeapi.TextReply("side request")
		}
		notes := filepath.Join(c.proj, "notes.txt")
		p := r.LastPrompt()
		call := r.Call
		var reply fakeapi.Reply
		ok := false
		switch p {
		case p1:
			reply, ok = call(0, "Write", map[string]string{"file_path": notes, "content": "one\n"})
		case p2:
			if reply, ok = call(0, "Read", map[string]string{"file_path": notes}); !ok {
				reply, ok = call(1, "Edit", map[string]string{"file_path": notes, "old_string": "one", "new_string": "two"})
			}
		case p3:
			reply, ok = call(0, "Write", map[string]string{"file_path": filepath.Join(c.proj, "other.txt"), "content": "other\n"})
		case p4:
			reply, ok = call(0, "Bash", map[string]string{"command": "rm notes.txt", "description": "Delete the notes"})
		}
		if ok {
			return reply
		}
		return fakeapi.TextReply("done: " + p)
	})
	bin := installRewind(t, c.home, c.env(), "--yes", "--agents", "claude")
	rewind := filepath.Join(bin, "rewind")
	env := c.env()
	runIn(t, c.proj, env, "git", "init", "-q")
	runIn(t, c.proj, env, rewind, "init")
	id := c.print(p1)
	for _, p := range []string{p2, p3, p4} {
		c.print(p, "--resume", id)
	}
	file := func(name string) string {
		b, err := os.ReadFile(filepath.Join(c.proj, name))
		if err != nil {
			return "<none>"
		}
		return string(b)
	}
	if file("notes.txt") != "<none>" || file("other.txt") != "other\n" {
		t.Fatalf("after the four prompts: notes.txt %q, other.txt %q", file("notes.txt"), file("other.txt"))
	}

	// list --grep: the one checkpoint taken at the prompt that says "charlie".
	out := runIn(t, c.proj, env, rewind, "list", "--grep", "CHARLIE", "--json")
	if n := bytes.Count(out, []byte("\n")); n != 1 || !bytes.Contains(out, []byte(`"prompt":"`+p3+`"`)) {
		t.Errorf("list --grep CHARLIE --json: %d rows, want the one at %q:\n%s", n, p3, out)
	}
	// diff ':/TEXT' -- PATH: from the tree before "charlie" ran, notes.txt only.
	out = runIn(t, c.proj, env, rewind, "diff", ":/charlie", "--stat", "--", "notes.txt")
	if string(out) != "D notes.txt\n" {
		t.Errorf("diff :/charlie --stat -- notes.txt = %q, want %q", out, "D notes.txt\n")
	}

	// restore ':/TEXT' -- PATH: notes.txt as it was before "delta" deleted it; other.txt, changed
	// by hand since, stays as it is; undo-restore reverts it.
	if err := os.WriteFile(filepath.Join(c.proj, "other.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, c.proj, env, rewind, "restore", ":/delta", "--", "notes.txt")
	if file("notes.txt") != "two\n" || file("other.txt") != "mine\n" {
		t.Errorf("after restore :/delta -- notes.txt: notes.txt %q (want two), other.txt %q (want mine)", file("notes.txt"), file("other.txt"))
	}
	runIn(t, c.proj, env, rewind, "undo-restore")
	if file("notes.txt") != "<none>" || file("other.txt") != "mine\n" {
		t.Errorf("after undo-restore: notes.txt %q (want none), other.txt %q (want mine)", file("notes.txt"), file("other.txt"))
	}

	// back ':/TEXT' --both: the chat to before "charlie", the code too.
	type backResult struct {
		Checkpoint string `json:"checkpoint"`
		Fork       *struct {
			SessionID string `json:"session_id"`
			Path      string `json:"path"`
		} `json:"fork"`
	}
	back := func(args ...string) backResult {
		t.Helper()
		out := runIn(t, c.proj, env, rewind, append([]string{"back", "--both", "--json"}, args...)...)
		var res backResult
		if err := json.Unmarshal(out, &res); err != nil || res.Fork == nil || res.Checkpoint == "" {
			t.Fatalf("rewind back %q: %v\n%s", args, err, out)
		}
		return res
	}
	first := back(":/CHARLIE: WRITE")
	if file("notes.txt") != "two\n" || file("other.txt") != "<none>" {
		t.Errorf("after back :/CHARLIE --both: notes.txt %q (want two), other.txt %q (want none)", file("notes.txt"), file("other.txt"))
	}
	c.print(p5, "--resume", first.Fork.SessionID)
	assertPrompts(t, c.lastConversation(), p1, p2, p5)

	// In that fork, "bravo" is a prompt it holds from its parent: back ':/bravo' --both cuts the
	// fork before it and restores the parent session's checkpoint taken at it.
	second := back(":/bravo", "--transcript", c.transcript(first.Fork.SessionID))
	if file("notes.txt") != "one\n" {
		t.Errorf("after back :/bravo --both in the fork: notes.txt %q, want one", file("notes.txt"))
	}
	c.print(p6, "--resume", second.Fork.SessionID)
	req := c.lastConversation()
	assertPrompts(t, req, p1, p6)
	for _, p := range []string{p2, p3, p4, p5} {
		if strings.Contains(string(req.Raw), p) {
			t.Errorf("the second fork's request mentions %q", p)
		}
	}
}
