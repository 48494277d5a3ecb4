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

// OpenCode 1.18.33 (opencode-ai), established with the real client:
//   - offline with a provider "fake" of npm @ai-sdk/anthropic (built into the binary) at the fake
//     API's /v1, OPENCODE_DISABLE_MODELS_FETCH and OPENCODE_DISABLE_AUTOUPDATE;
//     `opencode run WORDS…` (one argument holding spaces arrives wrapped in quotes), `-s <id>` to
//     go on;
//   - no shell hooks: Rewind's bridge is a plugin, ~/.config/opencode/plugin/rewind.js;
//   - when any plugin exists OpenCode first npm-installs @opencode-ai/plugin into its config
//     folder and waits for it (70 s offline, then it goes on): the test seeds the folder so
//     that OpenCode sees it installed, as a user online has it after the first start;
//   - sessions live in SQLite; the bridge mirrors each into ~/.rewind/opencode/<id>.jsonl.
var openCodeAgent = &agentE2E{
	name:   "opencode",
	exeVar: "REWIND_E2E_OPENCODE",
	setup: func(h *harness) {
		dir := filepath.Join(h.home, ".config", "opencode")
		config, _ := json.Marshal(map[string]any{
			"model": "fake/fake-model", "small_model": "fake/fake-model", "enabled_providers": []string{"fake"},
			"autoupdate": false, "share": "disabled", "permission": map[string]string{"edit": "allow", "bash": "allow"},
			"provider": map[string]any{"fake": map[string]any{"npm": "@ai-sdk/anthropic",
				"options": map[string]string{"baseURL": h.api.URL + "/v1", "apiKey": "x"},
				"models":  map[string]any{"fake-model": map[string]any{"tool_call": true, "limit": map[string]int{"context": 200000, "output": 8192}}}}},
		})
		for name, data := range map[string]string{
			"opencode.json":     string(config),
			"package-lock.json": `{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}`,
		} {
			if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
				h.t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				h.t.Fatal(err)
			}
		}
	},
	env: func(h *harness) []string {
		return []string{"OPENCODE_DISABLE_MODELS_FETCH=true", "OPENCODE_DISABLE_AUTOUPDATE=true", "npm_config_registry=http://127.0.0.1:9"}
	},
	prompt: func(h *harness, text, session string) string {
		args := []string{"run"}
		if session != "" {
			args = append(args, "-s", session)
		}
		h.run(append(args, strings.Fields(text)...)...)
		if session != "" {
			return session
		}
		return openCodeNewestSession(h)
	},
	write: func(h *harness, path, content string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "write", Input: map[string]string{"filePath": path, "content": content}}
	},
	edit: func(h *harness, path, old, new string) []fakeapi.ToolUse {
		return []fakeapi.ToolUse{
			{Name: "read", Input: map[string]string{"filePath": path}},
			{Name: "edit", Input: map[string]string{"filePath": path, "oldString": old, "newString": new}},
		}
	},
	shell: func(h *harness, cmd string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "bash", Input: map[string]string{"command": cmd, "description": "run " + cmd}}
	},
	settings: func(h *harness) []string {
		return []string{filepath.Join(h.home, ".config", "opencode", "plugin", "rewind.js")}
	},
}

func TestOpenCodeScenario(t *testing.T) { runScenario(t, openCodeAgent) }

func TestOpenCodeBridgeFaults(t *testing.T) { runBridgeFaults(t, openCodeAgent) }

// openCodeNewestSession is the session the bridge mirrored last.
func openCodeNewestSession(h *harness) string {
	files, _ := filepath.Glob(filepath.Join(h.home, ".rewind", "opencode", "ses_*.jsonl"))
	var newest string
	var at int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.ModTime().UnixNano() > at {
			newest, at = f, st.ModTime().UnixNano()
		}
	}
	if newest == "" {
		h.t.Fatal("the bridge mirrored no OpenCode session")
	}
	return strings.TrimSuffix(filepath.Base(newest), ".jsonl")
}
