package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"rewind.dev/fork"
	"rewind.dev/jsonl"
)

// geminiProject finds a project's slug as Gemini CLI does, and claims one as it does.
func TestGeminiProject(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(rel string) string {
		b, _ := os.ReadFile(filepath.Join(home, rel))
		return string(b)
	}
	// Registered, its folders owned by it.
	write("projects.json", `{"projects":{"/w/app":"app","/x/my App!":"taken"}}`)
	write("tmp/app/.project_root", "/w/app")
	if got, err := geminiProject(home, "/w/app"); err != nil || got != "app" {
		t.Errorf("registered: %q, %v", got, err)
	}
	// Not registered, but a folder's marker names it.
	write("history/old-slug/.project_root", "/w/old")
	if got, err := geminiProject(home, "/w/old"); err != nil || got != "old-slug" || read("tmp/old-slug/.project_root") != "/w/old" {
		t.Errorf("adopted: %q, %v", got, err)
	}
	// New: the base name's slug, past one the registry gives another and one another owns.
	write("tmp/app-1/.project_root", "/z/app")
	if got, err := geminiProject(home, "/y/App"); err != nil || got != "app-2" {
		t.Errorf("claimed: %q, %v", got, err)
	}
	if read("tmp/app-2/.project_root") != "/y/App" || read("history/app-2/.project_root") != "/y/App" {
		t.Error("the claim wrote no .project_root files")
	}
	if got, _ := geminiProject(home, "/y/App"); got != "app-2" {
		t.Errorf("claimed again: %q", got)
	}
	for in, want := range map[string]string{"My App!": "my-app", "--": "project", "a__b": "a-b", "Ünï": "n"} {
		if got := geminiSlug(in); got != want {
			t.Errorf("geminiSlug(%q) = %q, want %q", in, got, want)
		}
	}
}

// Each agent's import rule names a session of the project where the agent keeps it.
func TestSessionSource(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME", "REWIND_HOME"} {
		t.Setenv(v, "")
	}
	want := map[string]string{
		"claude":   home + "/.claude/projects/-w-my-app/ID.jsonl",
		"pi":       home + "/.pi/agent/sessions/--w-my.app--/ID.jsonl",
		"codex":    home + "/.codex/sessions/0000/00/00/rollout-ID.jsonl",
		"gemini":   home + "/.gemini/tmp/my-app/chats/ID.jsonl",
		"copilot":  home + "/.copilot/session-state/ID/events.jsonl",
		"opencode": home + "/.rewind/opencode/ID.jsonl",
	}
	for agent, w := range want {
		d, err := jsonl.LookupDialect(agent)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := SessionSource(d, "/w/my.app", "ID"); err != nil || got != w {
			t.Errorf("%s: %q, %v; want %q", agent, got, err, w)
		}
	}
	t.Setenv("CODEX_HOME", "/c")
	t.Setenv("GEMINI_CLI_HOME", home+"/g")
	for agent, w := range map[string]string{"codex": "/c/sessions/0000/00/00/rollout-ID.jsonl", "gemini": home + "/g/.gemini/tmp/my-app/chats/ID.jsonl"} {
		d, _ := jsonl.LookupDialect(agent)
		if got, err := SessionSource(d, "/w/my.app", "ID"); err != nil || got != w {
			t.Errorf("%s with its variable set: %q, %v; want %q", agent, got, err, w)
		}
	}
	d, _ := jsonl.LookupDialect("droid")
	var um *fork.UnmovableError
	if _, err := SessionSource(d, "/w/my.app", "ID"); !errors.As(err, &um) {
		t.Errorf("droid: %v, want the not-supported error", err)
	}
}
