//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"rewind.dev/e2e/fakeapi"
)

// TestDroidHooks: Rewind installed by install.sh registers its hooks with Droid; a `droid exec`
// session whose model creates a file fires them with Droid's own payloads: session.json names
// the session, the env file from the SessionStart JSON gets the exports (and the Execute tool
// sees them), checkpoints exist, and a fork of the transcript carries the "[Fork] " title.
//
// Established with droid 0.225.2: `droid exec` fires SessionStart, PreToolUse, PostToolUse,
// Stop and SessionEnd but no UserPromptSubmit; the env file is deleted when the session ends.
// Resuming a session (Rewind's fork included) cannot be tried offline: `droid exec -s <id>`
// fetches the session from api.factory.ai ("Failed to fetch session", ENOTFOUND), and the
// interactive client asks to log in to a Factory account before anything else.
func TestDroidHooks(t *testing.T) {
	droid := os.Getenv("REWIND_E2E_DROID")
	if droid == "" {
		t.Fatal("REWIND_E2E_DROID must be set; run scripts/e2e")
	}
	var proj string
	api, err := fakeapi.Start(func(r *fakeapi.Request) fakeapi.Reply {
		p := r.LastPrompt()
		calls := []fakeapi.ToolUse{
			{Name: "Create", Input: map[string]string{"file_path": filepath.Join(proj, "a.txt"), "content": "hello\n"}},
			{Name: "Execute", Input: map[string]string{"command": "echo \"$REWIND_AGENT $REWIND_SESSION_ID\" > seen.txt",
				"summary": "Record the rewind variables", "riskLevel": "low", "riskLevelReason": "writes one file"}},
		}
		if !strings.Contains(p, "create a.txt") {
			return fakeapi.TextReply("side request")
		}
		for i := range calls {
			id := fakeapi.ToolID(p, i)
			if !r.HasToolResult(id) {
				calls[i].ID = id
				return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{calls[i]}}
			}
		}
		return fakeapi.TextReply("done")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	os.MkdirAll(filepath.Join(home, ".factory"), 0o755)
	os.MkdirAll(proj, 0o755)
	settings, _ := json.Marshal(map[string]any{"customModels": []any{map[string]any{
		"model": "m", "displayName": "Local", "baseUrl": api.URL, "apiKey": "x", "provider": "anthropic", "maxOutputTokens": 1000}}})
	if err := os.WriteFile(filepath.Join(home, ".factory", "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8"}
	bin := installRewind(t, home, env, "--yes", "--agents", "droid")
	rewind := filepath.Join(bin, "rewind")
	if b, _ := os.ReadFile(filepath.Join(home, ".factory", "settings.json")); !bytes.Contains(b, []byte("rewind-hook pre-tool-use --agent droid")) {
		t.Fatalf("install.sh did not register the hooks in ~/.factory/settings.json:\n%s", b)
	}
	runIn(t, proj, env, "git", "init", "-q")
	runIn(t, proj, env, rewind, "init")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, droid, "exec", "-m", "custom:m", "--auto", "high", "please create a.txt")
	cmd.Dir, cmd.Env = proj, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("droid exec: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "a.txt")); string(b) != "hello\n" {
		t.Fatalf("the scripted Create did not run: %q\n%s", b, out)
	}

	logs := readHookLog(t, home)
	seen := map[string]hookLog{}
	for _, l := range logs {
		if l.Error != "" || l.Agent != "droid" {
			t.Errorf("hook run: %+v", l)
		}
		seen[l.Event] = l
	}
	for _, ev := range []string{"SessionStart", "PreToolUse", "PostToolUse"} {
		if _, ok := seen[ev]; !ok {
			t.Errorf("no %s hook ran (log: %+v)", ev, logs)
		}
	}
	start := seen["SessionStart"]
	if !strings.Contains(start.EnvFile, "/.factory/") || start.Action != "checkpoint" {
		t.Errorf("SessionStart: %+v, want an env file under ~/.factory and a checkpoint", start)
	}
	id := start.SessionID
	if b, _ := os.ReadFile(filepath.Join(proj, "seen.txt")); strings.TrimSpace(string(b)) != "droid "+id {
		t.Errorf("the Execute tool saw %q, want the env file's exports %q", b, "droid "+id)
	}

	var sess struct {
		Agent          string `json:"agent"`
		SessionID      string `json:"session_id"`
		TranscriptPath string `json:"transcript_path"`
		EnvFile        string `json:"env_file"`
	}
	b, err := os.ReadFile(filepath.Join(storeDir(t, proj, env, rewind), "session.json"))
	if err != nil || json.Unmarshal(b, &sess) != nil {
		t.Fatalf("session.json: %v\n%s", err, b)
	}
	wantTranscript := filepath.Join(home, ".factory", "sessions", strings.ReplaceAll(proj, "/", "-"), id+".jsonl")
	if sess.Agent != "droid" || sess.SessionID != id || sess.TranscriptPath != wantTranscript || sess.EnvFile != start.EnvFile {
		t.Errorf("session.json = %+v, want droid %s %s %s", sess, id, wantTranscript, start.EnvFile)
	}
	triggers := checkpointTriggers(t, proj, env, rewind)
	if len(triggers) == 0 || triggers[0] != "hook:SessionStart:" {
		t.Errorf("checkpoints: %q, want the session start's first", triggers)
	}
	t.Logf("checkpoints, oldest first: %q", triggers)

	// A fork of the whole transcript is titled "[Fork] …" in its session_start line.
	st, err := os.Stat(wantTranscript)
	if err != nil {
		t.Fatal(err)
	}
	forkOut := runIn(t, proj, env, filepath.Join(bin, "rewind-fork"), "create", "--from", wantTranscript, "--offset", strconv.FormatInt(st.Size(), 10))
	var f struct {
		Path  string `json:"path"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal(forkOut, &f); err != nil {
		t.Fatalf("rewind-fork: %v\n%s", err, forkOut)
	}
	first, _, _ := bytes.Cut(must(os.ReadFile(f.Path)), []byte("\n"))
	var head struct {
		Type  string `json:"type"`
		Title string `json:"title"`
	}
	if json.Unmarshal(first, &head) != nil || head.Type != "session_start" || !strings.HasPrefix(head.Title, "[Fork] ") {
		t.Errorf("fork's first line %s, want a session_start titled [Fork] …", first)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestDroidBackBoth: after two `droid exec` runs (each a session of its own, and droid exec sends
// no prompt hook), `rewind back 1 --both` finds the second session's SessionStart checkpoint —
// although Droid rewrote that session's first line after the hook took it — puts the tree back
// as it was before the second prompt, and writes a fork titled "[Fork] …" that keeps none of it.
func TestDroidBackBoth(t *testing.T) {
	droid := os.Getenv("REWIND_E2E_DROID")
	if droid == "" {
		t.Fatal("REWIND_E2E_DROID must be set; run scripts/e2e")
	}
	var proj string
	api, err := fakeapi.Start(func(r *fakeapi.Request) fakeapi.Reply {
		p := r.LastPrompt()
		var call fakeapi.ToolUse
		switch {
		case strings.Contains(p, "first: create a.txt"):
			call = fakeapi.ToolUse{Name: "Create", Input: map[string]string{"file_path": filepath.Join(proj, "a.txt"), "content": "one\n"}}
		case strings.Contains(p, "second: change a.txt"):
			call = fakeapi.ToolUse{Name: "Execute", Input: map[string]string{"command": "echo two > a.txt",
				"summary": "Change a.txt", "riskLevel": "low", "riskLevelReason": "writes one file"}}
		default:
			return fakeapi.TextReply("side request")
		}
		if id := fakeapi.ToolID(p, 0); !r.HasToolResult(id) {
			call.ID = id
			return fakeapi.Reply{ToolUses: []fakeapi.ToolUse{call}}
		}
		return fakeapi.TextReply("done")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	os.MkdirAll(filepath.Join(home, ".factory"), 0o755)
	os.MkdirAll(proj, 0o755)
	settings, _ := json.Marshal(map[string]any{"customModels": []any{map[string]any{
		"model": "m", "displayName": "Local", "baseUrl": api.URL, "apiKey": "x", "provider": "anthropic", "maxOutputTokens": 1000}}})
	if err := os.WriteFile(filepath.Join(home, ".factory", "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8"}
	bin := installRewind(t, home, env, "--yes", "--agents", "droid")
	rewind := filepath.Join(bin, "rewind")
	runIn(t, proj, env, "git", "init", "-q")
	runIn(t, proj, env, rewind, "init")
	for _, p := range []string{"first: create a.txt", "second: change a.txt"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, droid, "exec", "-m", "custom:m", "--auto", "high", p)
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("droid exec %q: %v\n%s", p, err, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "a.txt")); string(b) != "two\n" {
		t.Fatalf("after both runs a.txt = %q, want two", b)
	}
	out := runIn(t, proj, env, rewind, "back", "1", "--both", "--json")
	var res struct {
		Fork *struct {
			Path  string `json:"path"`
			Title string `json:"title"`
		} `json:"fork"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Fork == nil {
		t.Fatalf("rewind back 1 --both: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "a.txt")); string(b) != "one\n" {
		t.Errorf("after back 1 --both a.txt = %q, want one (as before the second prompt)", b)
	}
	fork := must(os.ReadFile(res.Fork.Path))
	first, rest, _ := bytes.Cut(fork, []byte("\n"))
	// The title (Droid names a session after its first prompt) may say it; no message may.
	if !bytes.Contains(first, []byte(`"type":"session_start"`)) || !strings.HasPrefix(res.Fork.Title, "[Fork] ") || bytes.Contains(rest, []byte("second: change a.txt")) {
		t.Errorf("fork %s titled %q:\n%s", res.Fork.Path, res.Fork.Title, fork)
	}
}
