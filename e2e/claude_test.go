//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"rewind.dev/e2e/fakeapi"
)

// claude is one isolated Claude Code installation state: a temp HOME, a project directory, and
// a fake API the client talks to.
//
// Facts established with the real client (Claude Code 2.1.197, the version scripts/e2e pins):
//   - The transcript is $HOME/.claude/projects/<project dir, every non-alphanumeric → '-'>/<session-id>.jsonl,
//     mode 0600; it does not exist before the first prompt is written.
//   - `claude -p` runs offline with ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY=x, DISABLE_TELEMETRY=1,
//     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 and, as root, IS_SANDBOX=1; besides
//     /v1/messages it sends one HEAD / (connectivity) per run.
//   - Interactive runs additionally need $HOME/.claude.json with hasCompletedOnboarding, the key's
//     last 20 characters approved in customApiKeyResponses, and hasTrustDialogAccepted for the
//     project. --dangerously-skip-permissions shows a confirmation screen interactively, so the
//     interactive tests script text-only replies and run without it.
type claude struct {
	t         *testing.T
	exe       string
	rewindBin string
	home      string
	proj      string
	api       *fakeapi.Server
}

const apiKey = "x"

func newClaude(t *testing.T, script fakeapi.Script) *claude {
	t.Helper()
	exe := os.Getenv("REWIND_E2E_CLAUDE")
	bin := os.Getenv("REWIND_E2E_BIN")
	if exe == "" || bin == "" {
		t.Fatal("REWIND_E2E_CLAUDE and REWIND_E2E_BIN must be set; run scripts/e2e")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &claude{t: t, exe: exe, rewindBin: bin, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj")}
	for _, d := range []string{c.home, c.proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	last20 := apiKey[max(0, len(apiKey)-20):]
	cfg, _ := json.Marshal(map[string]any{
		"hasCompletedOnboarding": true,
		"customApiKeyResponses":  map[string]any{"approved": []string{last20}, "rejected": []string{}},
		"projects":               map[string]any{c.proj: map[string]any{"hasTrustDialogAccepted": true}},
	})
	if err := os.WriteFile(filepath.Join(c.home, ".claude.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	c.api, err = fakeapi.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.api.Close() })
	return c
}

// env is the whole environment of the client: nothing is inherited but PATH and TERM.
func (c *claude) env() []string {
	return []string{
		"HOME=" + c.home,
		"PATH=" + os.Getenv("PATH"),
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + c.api.URL,
		"ANTHROPIC_API_KEY=" + apiKey,
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"IS_SANDBOX=1",
	}
}

// projectDir is where the client keeps this project's transcripts.
func (c *claude) projectDir() string {
	return filepath.Join(c.home, ".claude", "projects", regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(c.proj, "-"))
}

func (c *claude) transcript(sessionID string) string {
	return filepath.Join(c.projectDir(), sessionID+".jsonl")
}

// print runs `claude -p PROMPT` with extra args (e.g. --resume ID) and returns the session id
// the client reports.
func (c *claude) print(prompt string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"-p", prompt, "--output-format", "json", "--dangerously-skip-permissions"}, args...)
	cmd := exec.CommandContext(ctx, c.exe, argv...)
	cmd.Dir = c.proj
	cmd.Env = c.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		c.t.Fatalf("claude %q: %v\nstdout: %s\nstderr: %s", argv, err, stdout.Bytes(), stderr.Bytes())
	}
	var res struct {
		SessionID string `json:"session_id"`
		IsError   bool   `json:"is_error"`
		Result    string `json:"result"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.SessionID == "" || res.IsError {
		c.t.Fatalf("claude %q: unexpected result %s (%v)\nstderr: %s", argv, stdout.Bytes(), err, stderr.Bytes())
	}
	return res.SessionID
}

// rewind runs one of the built rewind binaries with stdin and returns its stdout.
func (c *claude) rewind(stdin []byte, name string, args ...string) []byte {
	c.t.Helper()
	cmd := exec.Command(filepath.Join(c.rewindBin, name), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = c.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		c.t.Fatalf("%s %q: %v\nstderr: %s", name, args, err, stderr.Bytes())
	}
	if stderr.Len() > 0 {
		c.t.Errorf("%s %q: successful run wrote to stderr: %s", name, args, stderr.Bytes())
	}
	return stdout.Bytes()
}

// lastConversation is the newest main-conversation request the fake API received (side
// requests offer no tools and are skipped).
func (c *claude) lastConversation() *fakeapi.Request {
	c.t.Helper()
	msgs := c.api.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if len(msgs[i].Tools) > 0 {
			return msgs[i]
		}
	}
	c.t.Fatal("the fake API received no conversation request")
	return nil
}

// assertPrompts checks that the request carries exactly the prompts want, in order.
func assertPrompts(t *testing.T, req *fakeapi.Request, want ...string) {
	t.Helper()
	got := req.Prompts()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("prompts the model received:\n got %q\nwant %q", got, want)
	}
}
