//go:build e2e

package e2e

import (
	"bufio"
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

// Gemini CLI 0.61.0 (@google/gemini-cli), established with the real client:
//   - offline with GOOGLE_GEMINI_BASE_URL at the fake API (its Gemini wire), any GEMINI_API_KEY,
//     and security.auth.selectedType "gemini-api-key" in ~/.gemini/settings.json;
//     `gemini -p PROMPT --yolo -m gemini-2.5-flash` (-m: no model-router request);
//   - hooks run only in a trusted folder, and headless gemini refuses an untrusted one: the
//     tests trust the project the way a user does when Gemini asks (~/.gemini/trustedFolders.json),
//     and leave folder trust on;
//   - the chat file is ~/.gemini/tmp/<project slug>/chats/session-<UTC minute>-<id8>.jsonl,
//     whose first line names the session; `--resume <id>` finds a session by that, not by name;
//   - Gemini shows the user whatever a hook prints: the tests require its stderr to hold no
//     hook message.
var geminiAgent = &agentE2E{
	name:   "gemini",
	exeVar: "REWIND_E2E_GEMINI",
	setup:  geminiSetup,
	env: func(h *harness) []string {
		return []string{"GOOGLE_GEMINI_BASE_URL=" + h.api.URL, "GEMINI_API_KEY=fake-key"}
	},
	prompt: func(h *harness, text, session string) string {
		before := geminiSessions(h)
		args := []string{"-p", text, "--yolo", "-m", "gemini-2.5-flash"}
		if session != "" {
			args = append([]string{"--resume", session}, args...)
		}
		geminiRun(h, h.proj, args...)
		if session != "" {
			if _, ok := geminiSessions(h)[session]; !ok {
				h.t.Fatalf("no chat file names session %s after resuming it", session)
			}
			return session
		}
		for id := range geminiSessions(h) {
			if _, ok := before[id]; !ok {
				return id
			}
		}
		h.t.Fatal("gemini wrote no new chat file")
		return ""
	},
	write: func(h *harness, path, content string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "write_file", Input: map[string]string{"file_path": path, "content": content}}
	},
	edit: func(h *harness, path, old, new string) []fakeapi.ToolUse {
		return []fakeapi.ToolUse{{Name: "replace", Input: map[string]string{"file_path": path, "old_string": old, "new_string": new, "instruction": "change it"}}}
	},
	shell: func(h *harness, cmd string) fakeapi.ToolUse {
		return fakeapi.ToolUse{Name: "run_shell_command", Input: map[string]string{"command": cmd, "description": "run it"}}
	},
	settings: func(h *harness) []string {
		return []string{filepath.Join(h.home, ".gemini", "settings.json"), filepath.Join(h.home, ".gemini", "trustedFolders.json")}
	},
	notProven: "how the real Gemini API takes the tool results a resume sends twice (Gemini CLI's own doing, forks or not)",
}

func TestGeminiScenario(t *testing.T) { runScenario(t, geminiAgent) }

// geminiSettings is the user's ~/.gemini/settings.json in the tests, as Gemini itself writes
// it (two-space JSON, no final newline).
const geminiSettings = `{
  "security": {
    "auth": {
      "selectedType": "gemini-api-key"
    }
  },
  "general": {
    "enableAutoUpdate": false,
    "enableAutoUpdateNotification": false
  },
  "privacy": {
    "usageStatisticsEnabled": false
  },
  "telemetry": {
    "enabled": false
  }
}`

func geminiSetup(h *harness) {
	dir := filepath.Join(h.home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(geminiSettings), 0o644); err != nil {
		h.t.Fatal(err)
	}
	geminiTrust(h, h.proj)
}

// geminiTrust trusts a project folder as a user does when Gemini asks.
func geminiTrust(h *harness, dirs ...string) {
	trust := map[string]string{}
	p := filepath.Join(h.home, ".gemini", "trustedFolders.json")
	if b, err := os.ReadFile(p); err == nil {
		json.Unmarshal(b, &trust)
	}
	for _, d := range dirs {
		trust[d] = "TRUST_FOLDER"
	}
	b, _ := json.MarshalIndent(trust, "", "  ")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// hookNoise is what Gemini prints when a hook printed something or failed.
var hookNoise = regexp.MustCompile(`Hook system message|Hook\(s\) \[|Hook execution|hook failed|rewind-hook|rewind:`)

// geminiRun runs gemini with args in dir and returns its stdout; a failure, or a hook message
// on its stderr, ends the test.
func geminiRun(h *harness, dir string, args ...string) string {
	h.t.Helper()
	stdout, stderr := geminiRunNoisy(h, dir, args...)
	if m := hookNoise.FindString(stderr); m != "" {
		h.t.Errorf("gemini %q showed hook output (%q):\n%s", args, m, stderr)
	}
	return stdout
}

// geminiRunNoisy runs gemini with args in dir and returns its stdout and stderr; a failure
// ends the test.
func geminiRunNoisy(h *harness, dir string, args ...string) (string, string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.exe, args...)
	cmd.Dir, cmd.Env = dir, h.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("gemini %q: %v\nstdout: %s\nstderr: %s", args, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String(), stderr.String()
}

// geminiChatFiles lists every chat file of every project in h's home.
func geminiChatFiles(h *harness) []string {
	files, _ := filepath.Glob(filepath.Join(h.home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	return files
}

// geminiSessions maps the session id each chat file's first line names to the files.
func geminiSessions(h *harness) map[string][]string {
	out := map[string][]string{}
	for _, f := range geminiChatFiles(h) {
		if id := geminiFileSession(h, f); id != "" {
			out[id] = append(out[id], f)
		}
	}
	return out
}

func geminiFileSession(h *harness, file string) string {
	fh, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer fh.Close()
	first, _ := bufio.NewReader(fh).ReadBytes('\n')
	var meta struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(first, &meta)
	return meta.SessionID
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestGeminiForkSurvivesCleanup: every start of Gemini deletes the chat files of sessions with
// nothing to resume, and with each every file that shares its -<id8>.jsonl — such as the stub a
// resume leaves, named after the resumed session. A Rewind fork carries a tag of its own in its
// name, so it survives later starts and still resumes with exactly its history; a copy named
// after its own id8, as Gemini names sessions, goes with its stub (the control).
func TestGeminiForkSurvivesCleanup(t *testing.T) {
	var h *harness
	h = newHarness(t, geminiAgent, scenarioScript(&h))
	h.bin = installRewind(t, h.home, h.env(), "--yes", "--agents", "gemini")
	h.rewind = filepath.Join(h.bin, "rewind")
	runIn(t, h.proj, h.env(), "git", "init", "-q")
	runIn(t, h.proj, h.env(), h.rewind, "init")
	os.WriteFile(filepath.Join(h.proj, "gone.txt"), []byte("doomed\n"), 0o644)

	id := geminiAgent.prompt(h, promptWrite, "")
	geminiAgent.prompt(h, promptChange, id)
	var res struct {
		Resume string `json:"resume"`
		Fork   *struct {
			SessionID string `json:"session_id"`
			Path      string `json:"path"`
		} `json:"fork"`
	}
	h.rewindJSON(&res, "back", "1", "--both")
	if res.Fork == nil {
		t.Fatal("no fork")
	}
	fork, forkID := res.Fork.Path, res.Fork.SessionID
	if res.Resume != "gemini --resume "+forkID {
		t.Errorf("resume hint %q", res.Resume)
	}
	tag := regexp.MustCompile(`-([0-9a-f]{8})\.jsonl$`).FindStringSubmatch(fork)
	if tag == nil || tag[1] == forkID[:8] {
		t.Fatalf("fork %s: want a tag other than its id8 %s", fork, forkID[:8])
	}

	// The control: the fork's bytes under another new id, named as Gemini names a session.
	ctrlID := "c0ffee00-1111-4222-8333-444455556666"
	data, _ := os.ReadFile(fork)
	// (An earlier minute than the resume's: in the same minute the stub is the file itself.)
	ctrl := filepath.Join(filepath.Dir(fork), "session-2026-01-02T03-04-"+ctrlID[:8]+".jsonl")
	if err := os.WriteFile(ctrl, bytes.ReplaceAll(data, []byte(forkID), []byte(ctrlID)), 0o600); err != nil {
		t.Fatal(err)
	}

	// Resume both: each resume leaves a stub named after the session's id8 (and the next
	// start of another session drops it: the control's resume drops the fork's stub).
	stubs := func(id8 string) []string {
		var out []string
		for _, f := range geminiChatFiles(h) {
			if strings.HasSuffix(f, "-"+id8+".jsonl") {
				out = append(out, f)
			}
		}
		return out
	}
	geminiAgent.prompt(h, "delta: first words in the fork", forkID)
	if len(stubs(forkID[:8])) == 0 {
		t.Fatalf("resuming the fork left no stub -%s.jsonl: %q", forkID[:8], geminiChatFiles(h))
	}
	geminiAgent.prompt(h, "echo: first words in the control", ctrlID)
	if len(stubs(ctrlID[:8])) != 2 {
		t.Fatalf("resuming the control left no stub beside it: %q", geminiChatFiles(h))
	}

	// Gemini starts twice more for a session of its own: its cleanup drops the stubs.
	geminiAgent.prompt(h, "foxtrot: an unrelated session", "")
	geminiAgent.prompt(h, "golf: another one", "")
	if s := stubs(forkID[:8]); len(s) != 0 {
		t.Fatalf("the fork's stub %q is still there: Gemini's cleanup did not run", s)
	}
	if exists(ctrl) || len(stubs(ctrlID[:8])) != 0 {
		t.Errorf("the control, named after its own id8, survived (%q): this run does not show what the cleanup does", stubs(ctrlID[:8]))
	}
	if !exists(fork) {
		t.Fatalf("Gemini deleted the fork %s; chat files now: %q", fork, geminiChatFiles(h))
	}
	for _, l := range readHookLog(t, h.home) {
		if l.Error != "" {
			t.Errorf("hook failed: %+v", l)
		}
	}

	// The fork still resumes, with exactly its history.
	n := len(h.api.Messages())
	geminiAgent.prompt(h, promptAfter, forkID)
	req := lastConversationSince(t, h.api, n)
	assertPrompts(t, req, promptWrite, "delta: first words in the fork", promptAfter)
	out := string(runIn(t, h.proj, h.env(), h.exe, "--list-sessions"))
	t.Logf("gemini --list-sessions:\n%s", out)
	if !strings.Contains(out, "[Fork] ") || !strings.Contains(out, forkID) {
		t.Errorf("gemini --list-sessions does not list the fork as [Fork] …:\n%s", out)
	}
}

// TestGeminiToldOnceWithoutStore: in a trusted project that has no checkpoint store (and is no
// git work tree, where the first hook would make one) Gemini's hooks run, and the person is
// told once, through the systemMessage Gemini shows; nothing else a hook prints reaches the
// screen, then or in the next session. hook.log says why no checkpoint was taken.
func TestGeminiToldOnceWithoutStore(t *testing.T) {
	var h *harness
	h = newHarness(t, geminiAgent, scenarioScript(&h))
	h.bin = installRewind(t, h.home, h.env(), "--yes", "--agents", "gemini")
	_, stderr := geminiRunNoisy(h, h.proj, "-p", promptWrite, "--yolo", "-m", "gemini-2.5-flash")
	if got, _ := h.file("notes.txt"); got != "one\n" {
		t.Fatalf("notes.txt = %q, the scripted write did not run", got)
	}
	notice := regexp.MustCompile(`Hook system message: Rewind is installed, but .* has no checkpoint store`)
	if n := len(notice.FindAllString(stderr, -1)); n != 1 || len(hookNoise.FindAllString(stderr, -1)) != 1 {
		t.Errorf("the first session showed %d notices (want one, and no other hook output):\n%s", n, stderr)
	}
	geminiAgent.prompt(h, promptChange, "") // geminiRun fails on any hook output
	seen := map[string]bool{}
	for _, l := range readHookLog(t, h.home) {
		if l.Agent != "gemini" || l.Error != "" {
			t.Errorf("hook log: %+v", l)
		}
		seen[l.Event+"/"+l.Reason] = true
	}
	for _, want := range []string{"SessionStart/no-store", "UserPromptSubmit/no-store", "PreToolUse/no-store", "PostToolUse/no-store"} {
		if !seen[want] {
			t.Errorf("hook log has no %s (has %v)", want, seen)
		}
	}
	if seen["PreCompact/none"] || seen["PreCompact/no-store"] {
		t.Error("PreCompress ran Rewind's hook: it fires before every model call and is not registered")
	}
}

// TestGeminiSettingsRewritten: Gemini rewrites settings.json itself when it migrates a
// deprecated key. Rewind's hooks survive that, keep firing, and uninstall still takes them out:
// the file is then what Gemini makes of the user's file without Rewind, byte for byte.
func TestGeminiSettingsRewritten(t *testing.T) {
	deprecated := strings.Replace(geminiSettings, `"enableAutoUpdate": false`, `"disableAutoUpdate": true`, 1)
	run := func(install bool) (settings []byte, h *harness) {
		h = newHarness(t, geminiAgent, scenarioScript(&h))
		p := filepath.Join(h.home, ".gemini", "settings.json")
		os.WriteFile(p, []byte(deprecated), 0o644)
		if install {
			h.bin = installRewind(t, h.home, h.env(), "--yes", "--agents", "gemini")
			h.rewind = filepath.Join(h.bin, "rewind")
			runIn(t, h.proj, h.env(), h.rewind, "init")
		}
		geminiAgent.prompt(h, promptWrite, "")
		if install {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte("disableAutoUpdate")) || !bytes.Contains(b, []byte("rewind-hook")) {
				t.Fatalf("after a run with Rewind's hooks, settings.json:\n%s\nwant Gemini's migration and Rewind's hooks", b)
			}
			geminiAgent.prompt(h, promptChange, "")
			var prompts []string
			for _, c := range listCheckpoints(t, h) {
				if c.Trigger.Event == "UserPromptSubmit" {
					prompts = append(prompts, c.Trigger.Prompt)
				}
			}
			if len(prompts) != 2 {
				t.Errorf("checkpoints at prompts after the rewrite: %q", prompts)
			}
			uninstall(t, h)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b, h
	}
	plain, _ := run(false)
	if bytes.Equal(plain, []byte(deprecated)) {
		t.Fatal("Gemini did not rewrite settings.json: this run does not show what the test is about")
	}
	withRewind, _ := run(true)
	if !bytes.Equal(withRewind, plain) {
		t.Errorf("settings.json after install, runs and uninstall:\n%s\nGemini's own rewrite of the same file:\n%s", withRewind, plain)
	}
}
