//go:build unix

package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hookDeadline is the hook deadline the tests configure: short, so a stuck
// lock costs seconds, not the default ten.
const hookDeadline = time.Second

// TestHooksNeverHurtTheAgent breaks the store in every way a hook can meet
// and runs every command each agent registered (Claude Code, Droid, Codex,
// Gemini CLI, Copilot CLI) with that agent's payload: each run exits 0 or 1
// (2 would block the agent; Copilot denies the tool on any non-zero exit, so
// its hooks exit 0), within its deadline, prints nothing on stdout, and a
// failure is one stderr line and a log entry saying why.
func TestHooksNeverHurtTheAgent(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(t *testing.T, w *world) (undo func())
		// fails: the hooks that checkpoint must exit 1 (and log why);
		// either: 0 or 1 are both right (a broken config is reported).
		fails, either bool
	}{
		{"healthy", func(t *testing.T, w *world) func() { return func() {} }, false, false},
		{"corrupt hook-state.json", func(t *testing.T, w *world) func() {
			writeFile(t, filepath.Join(w.project, ".agent/rewind/hook-state.json"), []byte("{\"version\":1,\"last_checkpoint_at\":\x00\x00 garbage"), 0o644)
			return func() {}
		}, false, false},
		{"corrupt session.json", func(t *testing.T, w *world) func() {
			writeFile(t, filepath.Join(w.project, ".agent/rewind/session.json"), []byte("[1,2"), 0o644)
			return func() {}
		}, false, false},
		{"corrupt config.json", func(t *testing.T, w *world) func() {
			writeFile(t, filepath.Join(w.home, ".rewind/config.json"), []byte(`{"version":1,"tier":"nonsense","hook_deadline_ms":1000}`), 0o644)
			return func() {}
		}, false, true},
		{"lock held by a stuck process", func(t *testing.T, w *world) func() {
			f, err := os.OpenFile(filepath.Join(w.project, ".agent/rewind/lock"), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			return func() { f.Close() }
		}, true, false},
		{"store unwritable", func(t *testing.T, w *world) func() {
			return readOnly(t, filepath.Join(w.project, ".agent/rewind"))
		}, true, false},
		{"disk full", func(t *testing.T, w *world) func() {
			// The world lives on a small tmpfs (see below); fill it up.
			p := fillDisk(t, filepath.Join(w.project, ".agent/rewind"), 0)
			return func() { os.Remove(p) }
		}, true, false},
	}
	runs, failures := 0, 0
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			base := workDir(t)
			if c.name == "disk full" {
				// The project (and its store) on a small tmpfs; HOME, where the
				// hook logs, elsewhere: with HOME's disk full too there is
				// nowhere to log, and the stderr line is all that is left.
				mountTmpfs(t, filepath.Join(base, "w/p"), "16m")
			}
			w := newWorld(t, filepath.Join(base, "w"), 200, 1)
			writeFile(t, filepath.Join(w.home, ".rewind/config.json"), []byte(fmt.Sprintf(`{"version":1,"tier":"aggressive","hook_deadline_ms":%d}`, hookDeadline.Milliseconds())), 0o644)
			hooks := registeredHooks(t, w)
			undo := c.break_(t, w)
			defer undo()
			for _, h := range hooks {
				runs++
				logBefore := len(readHookLog(t, w.home))
				session := "bbbbbbbb-0000-4000-8000-00000000000" + fmt.Sprint(slices.Index(hookAgents, h.agent))
				r := run(t, proc{name: "/bin/sh", args: []string{"-c", h.command}, env: w.env, dir: w.project,
					stdin: agentHookInput(h.agent, h.action, h.event, session, w.transcript, w.project)})
				var errs []string
				failsClosed := h.agent == "copilot"
				switch {
				case failsClosed && r.code != 0:
					errs = append(errs, fmt.Sprintf("exit %d: any non-zero exit denies the agent's tool", r.code))
				case r.code != 0 && r.code != 1:
					errs = append(errs, fmt.Sprintf("exit %d (only 0 or 1 are allowed)", r.code))
				}
				if r.dur > hookDeadline+5*time.Second {
					errs = append(errs, fmt.Sprintf("took %v, past its %v deadline", r.dur, hookDeadline))
				}
				if r.stdout != "" {
					errs = append(errs, fmt.Sprintf("printed on stdout (the agent parses it): %q", r.stdout))
				}
				logs := readHookLog(t, w.home)
				if len(logs) != logBefore+1 {
					errs = append(errs, fmt.Sprintf("hook.log has %d new entries, want 1", len(logs)-logBefore))
				}
				failed := len(logs) > logBefore && logs[len(logs)-1].Error != ""
				if r.code == 1 && !failed {
					errs = append(errs, "exit 1 but the log entry says no error")
				}
				if r.code == 1 || failed {
					if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "rewind-hook: error: ") {
						errs = append(errs, fmt.Sprintf("stderr is not one error line: %q", r.stderr))
					}
				}
				// session-end and post-tool-use take no checkpoint: they must not
				// fail over a store they only update.
				checkpoints := h.action != "post-tool-use" && h.action != "session-end"
				if c.fails && checkpoints && !failed {
					errs = append(errs, "no error logged, yet the checkpoint cannot have been taken")
				}
				if c.fails && checkpoints && !failsClosed && r.code != 1 {
					errs = append(errs, fmt.Sprintf("exit %d, want 1: the checkpoint cannot have been taken", r.code))
				}
				if !c.fails && !c.either && (r.code != 0 || failed) {
					errs = append(errs, fmt.Sprintf("failed on a store it should cope with: %s", strings.TrimSpace(r.stderr)))
				}
				what := h.agent + " " + h.event
				if len(errs) > 0 {
					failures++
					t.Errorf("%s: %s", what, strings.Join(errs, "; "))
				} else {
					t.Logf("%s: exit %d in %v %s", what, r.code, r.dur.Round(time.Millisecond), strings.TrimSpace(r.stderr))
				}
			}
			undo()
			if c.name != "healthy" {
				return
			}
			if probs, _ := validate(t, w.project, w.env); len(probs) > 0 {
				t.Errorf("validate: %v", probs)
			}
		})
	}
	figures(t, "hooks-never-hurt", runs, runs, failures)
}

// hookAgents are the agents whose hooks run rewind-hook as a command line
// from their own hook file (pi and OpenCode run it from a bridge, whose
// faults e2e/bridge_test.go drives).
var hookAgents = []string{"claude", "droid", "codex", "gemini", "copilot"}

// hookFiles is where each agent keeps the hooks rewind-hook registers.
var hookFiles = map[string]string{
	"claude": ".claude/settings.json", "droid": ".factory/settings.json", "codex": ".codex/hooks.json",
	"gemini": ".gemini/settings.json", "copilot": ".copilot/hooks/rewind.json",
}

// registeredHook is one command an agent runs for one of its events.
type registeredHook struct{ agent, event, action, command string }

// registeredHooks registers Rewind for every hook agent in w's HOME, as
// install.sh does, and reads back the commands each agent would run: the
// test runs what the agent runs (a shell line, with Copilot's "; exit 0").
func registeredHooks(t *testing.T, w *world) []registeredHook {
	t.Helper()
	mustRun(t, proc{name: "rewind-hook", args: []string{"register", "--agents", strings.Join(hookAgents, ",")}, env: w.env, dir: w.project})
	var out []registeredHook
	for _, agent := range hookAgents {
		b, err := os.ReadFile(filepath.Join(w.home, hookFiles[agent]))
		if err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		var f struct{ Hooks map[string]any }
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		events := 0
		for event, v := range f.Hooks {
			for _, cmd := range commandsIn(v) {
				fields := strings.Fields(cmd)
				if len(fields) < 2 || !strings.Contains(fields[0], "rewind-hook") {
					continue
				}
				out = append(out, registeredHook{agent: agent, event: event, action: fields[1], command: cmd})
				events++
			}
		}
		if events < 5 {
			t.Fatalf("%s: only %d rewind-hook commands in %s:\n%s", agent, events, hookFiles[agent], b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].agent+out[i].event < out[j].agent+out[j].event })
	return out
}

// commandsIn finds the command lines in a hook file's event entry, however
// the agent nests them ("command" in Claude's groups, "bash" in Copilot's
// flat list).
func commandsIn(v any) []string {
	var out []string
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			out = append(out, commandsIn(e)...)
		}
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && (k == "command" || k == "bash") {
				out = append(out, s)
			} else {
				out = append(out, commandsIn(e)...)
			}
		}
	}
	return out
}

// agentHookInput is what agent sends on stdin for its event (native name)
// that rewind-hook's action handles: each agent's own field names and
// tools, as AGENTS.md records them from the real clients.
func agentHookInput(agent, action, event, session, transcript, cwd string) []byte {
	file := filepath.Join(cwd, "d00/s0/f0000.txt")
	in := map[string]any{"session_id": session, "transcript_path": transcript, "cwd": cwd, "hook_event_name": event}
	switch agent {
	case "codex":
		in["model"], in["permission_mode"] = "gpt-5.5", "bypassPermissions"
		if action != "session-start" && action != "session-end" {
			in["turn_id"] = "01a208ba-8114-7000-8000-000000000001"
		}
		in["tool_name"] = "apply_patch"
		in["tool_input"] = map[string]any{"command": "*** Begin Patch\n*** Update File: " + file + "\n@@\n-a\n+b\n*** End Patch\n"}
	case "gemini":
		in["timestamp"] = time.Now().UTC().Format(time.RFC3339Nano)
		in["tool_name"] = "write_file"
		in["tool_input"] = map[string]any{"file_path": "d00/s0/f0000.txt", "content": "b"}
	case "copilot":
		in = map[string]any{"sessionId": session, "timestamp": time.Now().UnixMilli(), "cwd": cwd,
			"toolName": "edit", "toolArgs": map[string]any{"path": file, "old_str": "a", "new_str": "b"}}
		if action == "stop" || action == "pre-compact" {
			in["transcriptPath"] = transcript
		}
	default: // Claude Code, Droid
		in["permission_mode"] = "default"
		in["tool_name"], in["tool_use_id"] = "Edit", "toolu_1"
		in["tool_input"] = map[string]any{"file_path": file, "old_string": "a", "new_string": "b"}
	}
	switch action {
	case "session-start":
		in["source"] = "startup"
	case "user-prompt-submit":
		in["prompt"] = "make it faster"
	case "stop":
		in["stop_hook_active"] = false
	case "pre-compact":
		in["trigger"] = "auto"
	case "session-end":
		in["reason"] = "other"
	}
	if action != "pre-tool-use" && action != "post-tool-use" {
		for _, k := range []string{"tool_name", "tool_input", "tool_use_id", "toolName", "toolArgs"} {
			delete(in, k)
		}
	}
	b, _ := json.Marshal(in)
	return b
}
