//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rewind.dev/e2e/fakeapi"
)

// Codex CLI 0.169.0 (@openai/codex), established with the real client:
//   - offline with ~/.codex/config.toml naming a model provider of wire_api "responses" at the
//     fake API; `codex exec --skip-git-repo-check --json PROMPT </dev/null` (its stdin must
//     not be a terminal or a pipe it waits on); model gpt-5.5, for which Codex offers
//     apply_patch as a custom tool (the patch is the call's input) beside exec_command;
//   - hooks in ~/.codex/hooks.json run only when config.toml trusts them: Rewind writes the
//     trust records at registration, and no test passes --dangerously-bypass-hook-trust;
//   - the session is ~/.codex/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl;
//     `codex exec resume <id> PROMPT` finds it by the id in the file name;
//   - a resumed session tells the model its folder (a new <environment_context> with <cwd>)
//     only when the folder it runs in differs from the one its world_state line records; with
//     that line moved too, the request names the new folder only among the workspace roots, and
//     the model goes on writing in the old <cwd> its history holds. An import leaves that line.
var codexAgent = &agentE2E{
	name:   "codex",
	exeVar: "REWIND_E2E_CODEX",
	setup: func(h *harness) {
		dir := filepath.Join(h.home, ".codex")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			h.t.Fatal(err)
		}
		config := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
`, h.api.URL+"/v1")
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o600); err != nil {
			h.t.Fatal(err)
		}
	},
	env: func(h *harness) []string { return []string{"FAKE_API_KEY=x"} },
	prompt: func(h *harness, text, session string) string {
		args := []string{"exec", "--skip-git-repo-check", "--json"}
		if session != "" {
			args = append(args, "resume", session)
		}
		out := h.run(append(args, text)...)
		id := codexThreadID(out)
		if id == "" {
			h.t.Fatalf("codex exec printed no thread.started event:\n%s", out)
		}
		return id
	},
	write: func(h *harness, path, content string) fakeapi.ToolUse {
		return codexPatch(h, "Add File", path, "+"+strings.TrimSuffix(content, "\n"))
	},
	edit: func(h *harness, path, old, new string) []fakeapi.ToolUse {
		return []fakeapi.ToolUse{codexPatch(h, "Update File", path, "@@\n-"+old+"\n+"+new)}
	},
	shell: func(h *harness, cmd string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "exec_command", Input: map[string]string{"cmd": cmd}}
	},
	settings: func(h *harness) []string {
		return []string{filepath.Join(h.home, ".codex", "hooks.json"), filepath.Join(h.home, ".codex", "config.toml")}
	},
	notProven: "the interactive picker's title of a fork (it reads Codex's state database, which only the app-server writes)",
}

func TestCodexScenario(t *testing.T) { runScenario(t, codexAgent) }

// codexPatch is an apply_patch call (a custom tool: the patch is its whole input) on a file,
// named relative to the project when it lies in it, else by its absolute path.
func codexPatch(h *harness, op, path, body string) fakeapi.ToolUse {
	name := path
	if rel, err := filepath.Rel(h.proj, path); err == nil && filepath.IsLocal(rel) {
		name = rel
	}
	return fakeapi.ToolUse{Name: "apply_patch", Custom: true,
		Input: "*** Begin Patch\n*** " + op + ": " + name + "\n" + body + "\n*** End Patch"}
}

// codexThreadID is the thread id of `codex exec --json`'s thread.started event.
func codexThreadID(out []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "thread.started" {
			return ev.ThreadID
		}
	}
	return ""
}

// TestCodexTrust: after install.sh registers the aggressive tier (every event and tool class
// Rewind uses), Codex's own app-server lists each of Rewind's hooks as trusted — the records
// Rewind wrote carry the hashes Codex computes — and after --uninstall hooks.json and
// config.toml are what they were.
func TestCodexTrust(t *testing.T) {
	var h *harness
	h = newHarness(t, codexAgent, scenarioScript(&h))
	settings := codexAgent.settings(h)
	before := snapshot(t, settings)
	h.bin = installRewind(t, h.home, h.env(), "--yes", "--agents", "codex", "--tier", "aggressive")

	hooks := codexListHooks(t, h)
	n := 0
	for _, hk := range hooks {
		if !strings.Contains(hk.Command, "rewind-hook") {
			continue
		}
		n++
		if hk.TrustStatus != "trusted" {
			t.Errorf("%s (%s): trust status %q, want trusted", hk.Key, hk.Command, hk.TrustStatus)
		}
	}
	if n != 7 {
		t.Errorf("Codex lists %d of Rewind's hooks, want the aggressive tier's 7: %+v", n, hooks)
	}

	uninstall(t, h)
	after := snapshot(t, settings)
	for _, p := range settings {
		if !bytes.Equal(before[p], after[p]) || (before[p] == nil) != (after[p] == nil) {
			t.Errorf("%s after --uninstall:\n%q\nbefore install:\n%q", p, after[p], before[p])
		}
	}
}

// codexHook is one hook of the app-server's hooks/list answer.
type codexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// codexListHooks asks `codex app-server` (JSON-RPC over stdio) for the hooks of the project.
func codexListHooks(t *testing.T, h *harness) []codexHook {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.exe, "app-server")
	cmd.Dir, cmd.Env = h.proj, h.env()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	send := func(v any) {
		b, _ := json.Marshal(v)
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatalf("app-server: %v\n%s", err, stderr.Bytes())
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	// recv reads until the answer to id (notifications may come first).
	recv := func(id int) json.RawMessage {
		for sc.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || *m.ID != id {
				continue
			}
			if m.Error != nil {
				t.Fatalf("app-server: %s", m.Error)
			}
			return m.Result
		}
		t.Fatalf("app-server closed its output: %v\n%s", sc.Err(), stderr.Bytes())
		return nil
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"clientInfo": map[string]any{"name": "rewind-e2e", "title": "Rewind e2e", "version": "0"}}})
	recv(1)
	send(map[string]any{"jsonrpc": "2.0", "method": "initialized"})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": map[string]any{"cwds": []string{h.proj}}})
	var res struct {
		Data []struct {
			Hooks []codexHook `json:"hooks"`
		} `json:"data"`
	}
	raw := recv(2)
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Data) == 0 {
		t.Fatalf("hooks/list answer: %v\n%s", err, raw)
	}
	return res.Data[0].Hooks
}

// TestCodexForkByName: the fork's [Fork] title, which Rewind appends to Codex's
// session_index.jsonl, is a name `codex exec resume` finds the fork by.
func TestCodexForkByName(t *testing.T) {
	var h *harness
	h = newHarness(t, codexAgent, scenarioScript(&h))
	h.bin = installRewind(t, h.home, h.env(), "--yes", "--agents", "codex")
	h.rewind = filepath.Join(h.bin, "rewind")
	runIn(t, h.proj, h.env(), h.rewind, "init")
	id := codexAgent.prompt(h, promptWrite, "")
	codexAgent.prompt(h, promptChange, id)
	var res struct {
		Fork *struct {
			SessionID string `json:"session_id"`
			Title     string `json:"title"`
		} `json:"fork"`
	}
	h.rewindJSON(&res, "back", "1")
	if res.Fork == nil || res.Fork.Title != "[Fork] "+promptWrite {
		t.Fatalf("rewind back 1: fork %+v, want one titled [Fork] %s", res.Fork, promptWrite)
	}
	n := len(h.api.Messages())
	if got := codexAgent.prompt(h, promptAfter, res.Fork.Title); got != res.Fork.SessionID {
		t.Errorf("codex exec resume %q opened session %s, want the fork %s", res.Fork.Title, got, res.Fork.SessionID)
	}
	assertPrompts(t, lastConversationSince(t, h.api, n), promptWrite, promptAfter)
}
