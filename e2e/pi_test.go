//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"rewind.dev/e2e/fakeapi"
)

// pi 0.73.1 (@mariozechner/pi-coding-agent), established with the real client:
//   - offline with ~/.pi/agent/models.json naming a provider of api "anthropic-messages" at the
//     fake API, and PI_OFFLINE=1; `pi --provider fake --model fake-model -p PROMPT`;
//   - no shell hooks: Rewind's bridge is an extension, ~/.pi/agent/extensions/rewind.ts;
//   - the session is ~/.pi/agent/sessions/--<cwd, / as ->--/<time>_<id>.jsonl, whose header line
//     holds the id; `--session <id>` finds a session by that id (a prefix of it), not by name.
var piAgent = &agentE2E{
	name:   "pi",
	exeVar: "REWIND_E2E_PI",
	setup: func(h *harness) {
		dir := filepath.Join(h.home, ".pi", "agent")
		models, _ := json.Marshal(map[string]any{"providers": map[string]any{"fake": map[string]any{
			"baseUrl": h.api.URL, "api": "anthropic-messages", "apiKey": "x",
			"models": []any{map[string]any{"id": "fake-model", "contextWindow": 200000, "maxTokens": 8192}},
		}}})
		if err := os.MkdirAll(dir, 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "models.json"), models, 0o644); err != nil {
			h.t.Fatal(err)
		}
	},
	env: func(h *harness) []string { return []string{"PI_OFFLINE=1"} },
	prompt: func(h *harness, text, session string) string {
		args := []string{"--provider", "fake", "--model", "fake-model"}
		if session != "" {
			args = append(args, "--session", session)
		}
		h.run(append(args, "-p", text)...)
		if session != "" {
			return piSessionOf(h, session)
		}
		return piNewestSession(h)
	},
	write: func(h *harness, path, content string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "write", Input: map[string]string{"path": path, "content": content}}
	},
	edit: func(h *harness, path, old, new string) []fakeapi.ToolUse {
		return []fakeapi.ToolUse{{Name: "edit", Input: map[string]any{"path": path, "edits": []any{map[string]string{"oldText": old, "newText": new}}}}}
	},
	shell: func(h *harness, cmd string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "bash", Input: map[string]string{"command": cmd}}
	},
	settings: func(h *harness) []string {
		return []string{filepath.Join(h.home, ".pi", "agent", "extensions", "rewind.ts")}
	},
}

func TestPiScenario(t *testing.T) { runScenario(t, piAgent) }

// piSessions lists the project's session files, oldest name first.
func piSessions(h *harness) []string {
	dir := filepath.Join(h.home, ".pi", "agent", "sessions", "--"+strings.ReplaceAll(strings.TrimPrefix(h.proj, "/"), "/", "-")+"--")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	sort.Strings(files)
	return files
}

// piHeaderID is the session id in a session file's header line.
func piHeaderID(h *harness, file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		h.t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	var head struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	if json.Unmarshal([]byte(first), &head) != nil || head.Type != "session" {
		h.t.Fatalf("%s: no session header: %s", file, first)
	}
	return head.ID
}

func piNewestSession(h *harness) string {
	files := piSessions(h)
	if len(files) == 0 {
		h.t.Fatal("pi wrote no session file")
	}
	return piHeaderID(h, files[len(files)-1])
}

// piSessionOf checks that a session with that id exists and returns it.
func piSessionOf(h *harness, id string) string {
	for _, f := range piSessions(h) {
		if piHeaderID(h, f) == id {
			return id
		}
	}
	h.t.Fatalf("no session file with id %s", id)
	return ""
}
