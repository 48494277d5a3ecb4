//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/e2e/fakeapi"
)

// TestClaudeBackPastCompaction: three prompts, Claude Code's own /compact (the fake model
// writes the summary), a fourth prompt that the model receives after the summary only; then
// `rewind back 2 --both` counts the prompts before the compaction as well (it cuts before the
// third), the tree goes back to before it, and the fork resumes with the first two prompts
// verbatim and no summary — the conversation as it was before the compaction. `rewind log
// --graph` shows the fork hanging off the session, before the third prompt.
func TestClaudeBackPastCompaction(t *testing.T) {
	const (
		p1      = "alpha: write notes.txt"
		p2      = "bravo: just talk"
		p3      = "charlie: rewrite notes.txt"
		p4      = "delta: after the compaction"
		p5      = "echo: in the fork"
		summary = "SUMMARY-OF-ALPHA-BRAVO-CHARLIE"
	)
	var c *claude
	c = newClaude(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Compaction() {
			return fakeapi.SummaryReply(summary)
		}
		if !r.HasTool("Write") {
			return fakeapi.TextReply("side request")
		}
		p := r.LastPrompt()
		// (After a compaction the client has forgotten which files were read, and refuses
		// to overwrite one unread: the fourth prompt writes a new file.)
		file, content := "notes.txt", map[string]string{p1: "one\n", p3: "three\n", p4: "four\n"}[p]
		if p == p4 {
			file = "later.txt"
		}
		if id := fakeapi.ToolID(p, 0); content != "" && !r.HasToolResult(id) {
			return fakeapi.Reply{Text: "Writing.", ToolUses: []fakeapi.ToolUse{{ID: id, Name: "Write",
				Input: map[string]string{"file_path": filepath.Join(c.proj, file), "content": content}}}}
		}
		return fakeapi.TextReply("done: " + p)
	})
	bin := installRewind(t, c.home, c.env(), "--yes", "--agents", "claude")
	rewind := filepath.Join(bin, "rewind")
	env := c.env()
	runIn(t, c.proj, env, "git", "init", "-q")
	runIn(t, c.proj, env, rewind, "init")

	id := c.print(p1)
	c.print(p2, "--resume", id)
	c.print(p3, "--resume", id)
	if got := c.print("/compact", "--resume", id); got != id {
		t.Fatalf("/compact went on in session %s, want %s", got, id)
	}
	var asked bool
	for _, m := range c.api.Messages() {
		asked = asked || m.Compaction()
	}
	if !asked {
		t.Fatal("/compact sent the model no summary request")
	}
	c.print(p4, "--resume", id)
	// The compaction is real: after it the model gets the summary in place of the earlier prompts.
	req := c.lastConversation()
	assertPrompts(t, req, p4)
	if !bytes.Contains(req.Raw, []byte(summary)) {
		t.Fatalf("the prompt after /compact was not sent the summary: %s", req.Raw)
	}
	transcript := c.transcript(id)
	if !hasLine(t, transcript, `"subtype":"compact_boundary"`) {
		t.Fatalf("%s holds no compact_boundary line", transcript)
	}
	if b, _ := os.ReadFile(filepath.Join(c.proj, "later.txt")); string(b) != "four\n" {
		t.Fatalf("later.txt = %q, want four", b)
	}

	// Two prompts back is before the third, across the compaction.
	out := runIn(t, c.proj, env, rewind, "back", "2", "--both", "--json")
	var res struct {
		Cut *struct {
			Before string `json:"before_prompt"`
		} `json:"cut"`
		Fork *struct {
			SessionID string `json:"session_id"`
			Path      string `json:"path"`
		} `json:"fork"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Fork == nil {
		t.Fatalf("rewind back 2 --both --json: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(c.proj, "notes.txt")); string(b) != "one\n" {
		t.Errorf("after back 2 --both notes.txt = %q, want the state before the third prompt: one", b)
	}
	if _, err := os.Stat(filepath.Join(c.proj, "later.txt")); err == nil {
		t.Error("after back 2 --both later.txt, written after the compaction, is still there")
	}
	if hasLine(t, res.Fork.Path, `"compact_boundary"`) || hasLine(t, res.Fork.Path, summary) {
		t.Errorf("the fork %s holds the compaction", res.Fork.Path)
	}
	c.print(p5, "--resume", res.Fork.SessionID)
	req = c.lastConversation()
	assertPrompts(t, req, p1, p2, p5)
	if bytes.Contains(req.Raw, []byte(summary)) || bytes.Contains(req.Raw, []byte(p3)) {
		t.Errorf("the resumed fork's request holds the summary or the third prompt: %s", req.Raw)
	}

	// The tree: the fork, with the checkpoint it took on resuming, off the session before the
	// third prompt.
	graph := string(runIn(t, c.proj, env, rewind, "log", "--graph"))
	t.Logf("rewind log --graph:\n%s", graph)
	var forkRow string
	for _, l := range strings.Split(graph, "\n") {
		if strings.Contains(l, "fork "+res.Fork.SessionID[:8]) {
			forkRow = l
		}
	}
	if !strings.Contains(forkRow, "of "+id[:8]+` before "`+p3+`", by back, code to `) {
		t.Errorf("log --graph has no row for the fork of %s before %q:\n%s", id[:8], p3, graph)
	}
	if !strings.Contains(graph, "|/") {
		t.Errorf("log --graph draws no branch:\n%s", graph)
	}
	var sessions []logSession
	dec := json.NewDecoder(bytes.NewReader(runIn(t, c.proj, env, rewind, "log", "--json")))
	for dec.More() {
		var se logSession
		if err := dec.Decode(&se); err != nil {
			t.Fatalf("rewind log --json: %v", err)
		}
		sessions = append(sessions, se)
	}
	if len(sessions) != 2 || sessions[0].SessionID != id || sessions[1].SessionID != res.Fork.SessionID {
		t.Fatalf("rewind log --json: %d sessions, want the session then its fork: %+v", len(sessions), sessions)
	}
	p := sessions[1].Parent
	if p == nil || p.SessionID != id || p.Prompt != p3 || p.After == "" {
		t.Errorf("the fork's parent = %+v, want session %s before %q after a checkpoint", p, id, p3)
	}
	if cps := sessions[1].Checkpoints; len(cps) == 0 || cps[0].Trigger != "prompt" || cps[0].Prompt != p5 {
		t.Errorf("the fork's checkpoints, newest first = %+v, want its prompt's (%q) first", cps, p5)
	}
}

// logSession is one line of rewind log --json.
type logSession struct {
	SessionID string `json:"session_id"`
	Parent    *struct {
		SessionID string `json:"session_id"`
		Prompt    string `json:"prompt"`
		After     string `json:"after"`
	} `json:"parent"`
	Checkpoints []struct {
		Trigger string `json:"trigger"`
		Prompt  string `json:"prompt"`
	} `json:"checkpoints"`
}

// hasLine reports whether a line of the file contains s.
func hasLine(t *testing.T, path, s string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			return true
		}
	}
	return false
}
