//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/e2e/fakeapi"
)

// installRewind runs the repository's install.sh in home with args, as a user would, and
// returns the bin folder it installed into. The Go caches of the test's own environment are
// passed on so the build does not download anything.
func installRewind(t *testing.T, home string, env []string, args ...string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "install.sh"), args...)
	cmd.Dir = home
	cmd.Env = append(env, "GOTOOLCHAIN=local")
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS"} {
		out, _ := exec.Command("go", "env", k).Output()
		if v := strings.TrimSpace(string(out)); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh %q: %v\n%s", args, err, out)
	}
	t.Logf("install.sh %s:\n%s", strings.Join(args, " "), out)
	return filepath.Join(home, ".rewind", "system", "bin")
}

// runIn runs a command in dir with env and returns stdout; a failure ends the test.
// storeDir is the folder of the store of the project in dir ('rewind store').
func storeDir(t *testing.T, dir string, env []string, rewind string) string {
	t.Helper()
	return strings.TrimSpace(string(runIn(t, dir, env, rewind, "store")))
}

func runIn(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\nstdout: %s\nstderr: %s", filepath.Base(name), args, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// hookLog is one line of ~/.rewind/logs/hook.log.
type hookLog struct {
	Event      string `json:"event"`
	Agent      string `json:"agent"`
	SessionID  string `json:"session_id"`
	Decision   string `json:"decision"`
	EnvFile    string `json:"env_file"`
	Action     string `json:"action"`
	Checkpoint string `json:"checkpoint"`
	Reason     string `json:"reason"`
	Created    string `json:"created"`
	Rewound    bool   `json:"rewound"`
	Error      string `json:"error"`
}

func readHookLog(t *testing.T, home string) []hookLog {
	t.Helper()
	f, err := os.Open(filepath.Join(home, ".rewind", "logs", "hook.log"))
	if err != nil {
		t.Fatalf("no hook log: %v", err)
	}
	defer f.Close()
	var out []hookLog
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l hookLog
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("hook log line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// checkpointTriggers lists, oldest first, "kind:event:prompt" of each checkpoint of the store.
func checkpointTriggers(t *testing.T, dir string, env []string, rewind string) []string {
	t.Helper()
	out := runIn(t, dir, env, rewind, "list", "--all", "--json")
	var events []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var v struct {
			Type       string `json:"type"`
			Checkpoint struct {
				Trigger struct {
					Kind   string `json:"kind"`
					Event  string `json:"event"`
					Prompt string `json:"prompt"`
				} `json:"trigger"`
			} `json:"checkpoint"`
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("rewind list --json: %v\n%s", err, out)
		}
		if v.Type == "checkpoint" {
			tr := v.Checkpoint.Trigger
			events = append([]string{tr.Kind + ":" + tr.Event + ":" + tr.Prompt}, events...) // list prints newest first
		}
	}
	return events
}

// TestClaudeHooksBackBoth: Rewind installed by install.sh into a fresh HOME registers its hooks
// with Claude Code; a three-prompt session whose edits come through Write, Edit and Bash gets a
// checkpoint at every prompt; `rewind back 2 --both` puts the tree back to before the second
// prompt (the file Bash deleted included) and its fork resumes with exactly the first prompt;
// `rewind undo-restore` brings the tree back.
func TestClaudeHooksBackBoth(t *testing.T) {
	const (
		p1 = "alpha: write notes.txt"
		p2 = "bravo: edit notes.txt"
		p3 = "charlie: delete notes.txt"
		p4 = "delta: what do you remember"
	)
	var c *claude
	c = newClaude(t, func(r *fakeapi.Request) fakeapi.Reply {
		if !r.HasTool("Write") {
			return fakeapi.TextReply("side request")
		}
		notes := filepath.Join(c.proj, "notes.txt")
		p := r.LastPrompt()
		call := r.Call
		switch p {
		case p1:
			if reply, ok := call(0, "Write", map[string]string{"file_path": notes, "content": "one\n"}); ok {
				return reply
			}
		case p2:
			if reply, ok := call(0, "Read", map[string]string{"file_path": notes}); ok {
				return reply
			}
			if reply, ok := call(1, "Edit", map[string]string{"file_path": notes, "old_string": "one", "new_string": "two"}); ok {
				return reply
			}
		case p3:
			if reply, ok := call(0, "Bash", map[string]string{"command": "rm notes.txt", "description": "Delete the notes"}); ok {
				return reply
			}
		}
		return fakeapi.TextReply("done: " + p)
	})
	bin := installRewind(t, c.home, c.env(), "--yes", "--agents", "claude,droid")
	rewind := filepath.Join(bin, "rewind")
	settings, err := os.ReadFile(filepath.Join(c.home, ".claude", "settings.json"))
	if err != nil || !bytes.Contains(settings, []byte(filepath.Join(bin, "rewind-hook")+" user-prompt-submit --agent claude")) {
		t.Fatalf("install.sh did not register the hooks in ~/.claude/settings.json (%v):\n%s", err, settings)
	}
	env := c.env()
	runIn(t, c.proj, env, "git", "init", "-q")
	runIn(t, c.proj, env, rewind, "init")
	if err := os.WriteFile(filepath.Join(c.proj, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	id := c.print(p1)
	c.print(p2, "--resume", id)
	if b, _ := os.ReadFile(filepath.Join(c.proj, "notes.txt")); string(b) != "two\n" {
		t.Fatalf("after the second prompt notes.txt = %q, want two", b)
	}
	c.print(p3, "--resume", id)
	if _, err := os.Stat(filepath.Join(c.proj, "notes.txt")); err == nil {
		t.Fatal("the scripted Bash rm did not run")
	}
	assertPrompts(t, c.lastConversation(), p1, p2, p3)

	logs := readHookLog(t, c.home)
	var prompts int
	for _, l := range logs {
		if l.Error != "" {
			t.Errorf("hook error: %+v", l)
		}
		if l.Agent != "claude" || l.SessionID != id {
			t.Errorf("hook ran for %s session %s, want claude %s", l.Agent, l.SessionID, id)
		}
		if l.Event == "UserPromptSubmit" {
			prompts++
			if l.Action != "checkpoint" || l.Checkpoint == "" {
				t.Errorf("a prompt boundary took no checkpoint: %+v", l)
			}
		}
		if l.Event == "SessionStart" && l.EnvFile == "" {
			t.Errorf("SessionStart wrote no env file: %+v", l)
		}
	}
	if prompts != 3 {
		t.Errorf("%d UserPromptSubmit hooks ran, want 3", prompts)
	}
	var atPrompts []string
	triggers := checkpointTriggers(t, c.proj, env, rewind)
	for _, tr := range triggers {
		if p, ok := strings.CutPrefix(tr, "hook:UserPromptSubmit:"); ok {
			atPrompts = append(atPrompts, p)
		}
	}
	if strings.Join(atPrompts, "|") != strings.Join([]string{p1, p2, p3}, "|") {
		t.Errorf("checkpoints at prompt boundaries: %q, want one per prompt (all, oldest first: %q)", atPrompts, triggers)
	}
	t.Logf("checkpoints, oldest first: %q", triggers)

	out := runIn(t, c.proj, env, rewind, "back", "2", "--both", "--json")
	var res struct {
		Type string `json:"type"`
		Fork *struct {
			SessionID string `json:"session_id"`
			Path      string `json:"path"`
		} `json:"fork"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Fork == nil {
		t.Fatalf("rewind back 2 --both --json: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(c.proj, "notes.txt")); err != nil || string(b) != "one\n" {
		t.Errorf("after back 2 --both notes.txt = %q (%v), want the state before the second prompt: one", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(c.proj, "keep.txt")); string(b) != "keep\n" {
		t.Errorf("keep.txt = %q", b)
	}
	if got := c.print(p4, "--resume", res.Fork.SessionID); got != res.Fork.SessionID {
		t.Errorf("resuming the fork reported session %s, want %s", got, res.Fork.SessionID)
	}
	req := c.lastConversation()
	assertPrompts(t, req, p1, p4)
	if bytes.Contains(req.Raw, []byte(p2)) || bytes.Contains(req.Raw, []byte(p3)) {
		t.Error("the resumed fork's request mentions the second or third prompt")
	}
	if got := req.Folder(); got != c.proj {
		t.Errorf("the resumed fork tells the model it works in %q, want %s", got, c.proj)
	}

	runIn(t, c.proj, env, rewind, "undo-restore")
	if _, err := os.Stat(filepath.Join(c.proj, "notes.txt")); err == nil {
		t.Error("undo-restore did not bring back the tree as it was (notes.txt deleted by the third prompt)")
	}
	if b, _ := os.ReadFile(filepath.Join(c.proj, "keep.txt")); string(b) != "keep\n" {
		t.Errorf("keep.txt after undo-restore = %q", b)
	}
}
