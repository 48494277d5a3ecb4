//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"rewind.dev/e2e/fakeapi"
)

// GitHub Copilot CLI 1.0.102 (@github/copilot), established with the real client:
//   - offline with COPILOT_OFFLINE=true and a provider of type anthropic at the fake API;
//     `copilot -p PROMPT --allow-all-tools`, `--resume=<id>` to go on; the output ends with
//     "Resume copilot --resume=<id>";
//   - hooks in every *.json of ~/.copilot/hooks/ (Rewind owns rewind.json), camelCase payloads;
//     any non-zero exit of preToolUse denies the tool, so Rewind's commands end in "; exit 0";
//   - the transcript ~/.copilot/session-state/<id>/events.jsonl is written by a batched writer,
//     often after the hooks that would read it: the hooks name it from the session id.
//
// The binary unpacks its 235 MB package into COPILOT_CACHE_HOME on first run; the tests share
// one outside their homes.
var copilotAgent = &agentE2E{
	name:   "copilot",
	exeVar: "REWIND_E2E_COPILOT",
	setup:  func(h *harness) {},
	env: func(h *harness) []string {
		cache := filepath.Join(h.root, "copilot-cache")
		if w := os.Getenv("REWIND_E2E_WORK"); w != "" {
			cache = filepath.Join(filepath.Dir(w), "copilot-cache")
		}
		return []string{"COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false", "COPILOT_PROVIDER_BASE_URL=" + h.api.URL,
			"COPILOT_PROVIDER_TYPE=anthropic", "COPILOT_PROVIDER_API_KEY=x", "COPILOT_MODEL=claude-sonnet-4.5",
			"COPILOT_CACHE_HOME=" + cache}
	},
	prompt: func(h *harness, text, session string) string {
		args := []string{"-p", text, "--allow-all-tools"}
		if session != "" {
			args = append(args, "--resume="+session)
		}
		out := append(h.run(args...), h.stderr...)
		m := regexp.MustCompile(`copilot --resume=([0-9a-f-]{36})`).FindSubmatch(out)
		if m == nil {
			h.t.Fatalf("copilot named no session to resume:\n%s", out)
		}
		return string(m[1])
	},
	write: func(h *harness, path, content string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "create", Input: map[string]string{"path": path, "file_text": content}}
	},
	edit: func(h *harness, path, old, new string) []fakeapi.ToolUse {
		return []fakeapi.ToolUse{{Name: "edit", Input: map[string]string{"path": path, "old_str": old, "new_str": new}}}
	},
	shell: func(h *harness, cmd string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "bash", Input: map[string]string{"command": cmd, "description": "run " + cmd}}
	},
	settings: func(h *harness) []string {
		return []string{filepath.Join(h.home, ".copilot", "hooks", "rewind.json")}
	},
}

func TestCopilotScenario(t *testing.T) { runScenario(t, copilotAgent) }
