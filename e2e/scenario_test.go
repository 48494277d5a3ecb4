//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rewind.dev/e2e/fakeapi"
)

// The scenario every agent Rewind supports goes through against its real client, offline: in a
// fresh HOME, install.sh --yes --agents <agent> registers Rewind; two prompts write a file,
// then change it and delete another with a shell command; there is a checkpoint per prompt,
// attributed to the agent; rewind back 1 --both puts the tree back to before the second prompt
// and writes a fork; resuming the fork sends the model exactly the first prompt and then the
// new one; rewind undo-restore brings everything back; install.sh --uninstall leaves the
// agent's settings as they were, byte for byte.

// agentE2E says how to drive one agent through the scenario.
type agentE2E struct {
	name string // Rewind's name for it: --agents, the dialect
	// exeVar is the environment variable scripts/e2e sets to the agent's binary.
	exeVar string
	// setup writes the agent's offline configuration into h.home, for the fake API at h.api.URL.
	setup func(h *harness)
	// env is the agent's environment beyond HOME, PATH, TERM and LANG.
	env func(h *harness) []string
	// prompt runs one prompt, in a new session (session == "") or resuming one, and returns
	// the session's id.
	prompt func(h *harness, text, session string) string
	// write, edit and shell are the agent's tool calls (their ids are filled in by the script).
	write func(h *harness, path, content string) fakeapi.ToolUse
	edit  func(h *harness, path, old, new string) []fakeapi.ToolUse
	shell func(h *harness, cmd string) fakeapi.ToolUse
	// settings are the files install.sh may write for the agent (hook files, bridges, trust):
	// after --uninstall each is what it was before install, or absent if it was absent.
	settings func(h *harness) []string
	// notProven is what the scenario cannot show for this agent offline ("" when nothing).
	notProven string
}

// harness is one agent's isolated world: a HOME, a project, the fake API, Rewind installed.
type harness struct {
	t      *testing.T
	a      *agentE2E
	exe    string
	root   string
	home   string
	proj   string
	api    *fakeapi.Server
	bin    string // Rewind's installed binaries
	rewind string
	stderr []byte // of the agent's last run
}

// newHarness makes the world; root is outside /tmp when the agent needs it (Codex refuses to
// make its helper aliases under a temporary folder).
func newHarness(t *testing.T, a *agentE2E, script fakeapi.Script) *harness {
	t.Helper()
	exe := os.Getenv(a.exeVar)
	if exe == "" {
		t.Fatalf("%s must be set; run scripts/e2e", a.exeVar)
	}
	root := t.TempDir()
	if base := os.Getenv("REWIND_E2E_WORK"); base != "" {
		var err error
		if root, err = os.MkdirTemp(base, a.name+"-"); err != nil {
			t.Fatal(err)
		}
		if os.Getenv("REWIND_E2E_KEEP") == "" {
			t.Cleanup(func() { os.RemoveAll(root) })
		} else {
			t.Logf("REWIND_E2E_KEEP: leaving %s", root)
		}
	}
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, a: a, exe: exe, root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj")}
	for _, d := range []string{h.home, h.proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if h.api, err = fakeapi.Start(script); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.api.Close()
		if os.Getenv("REWIND_E2E_KEEP") != "" {
			h.keepRequests()
		}
	})
	a.setup(h)
	return h
}

// keepRequests writes the body of every request the fake API received to root/requests, as
// NNNN-<path>.json, for a look at what the client sent (REWIND_E2E_KEEP).
func (h *harness) keepRequests() {
	dir := filepath.Join(h.root, "requests")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Log(err)
		return
	}
	for i, r := range h.api.Recorded() {
		name := fmt.Sprintf("%04d-%s.json", i, strings.ReplaceAll(strings.Trim(r.Path, "/"), "/", "_"))
		if err := os.WriteFile(filepath.Join(dir, name), r.Body, 0o644); err != nil {
			h.t.Log(err)
			return
		}
	}
}

// env is the whole environment of the agent and of Rewind's commands: nothing is inherited
// but PATH.
func (h *harness) env() []string {
	env := []string{"HOME=" + h.home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8"}
	if h.a.env != nil {
		env = append(env, h.a.env(h)...)
	}
	return env
}

// run runs the agent's binary with args in the project and returns its stdout.
func (h *harness) run(args ...string) []byte {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.exe, args...)
	cmd.Dir, cmd.Env = h.proj, h.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("%s %q: %v\nstdout: %s\nstderr: %s", h.a.name, args, err, stdout.Bytes(), stderr.Bytes())
	}
	h.stderr = stderr.Bytes()
	return stdout.Bytes()
}

// rewindJSON runs rewind with args (and --json) in the project and decodes its output.
func (h *harness) rewindJSON(v any, args ...string) {
	h.t.Helper()
	out := runIn(h.t, h.proj, h.env(), h.rewind, append(args, "--json")...)
	if err := json.Unmarshal(out, v); err != nil {
		h.t.Fatalf("rewind %q --json: %v\n%s", args, err, out)
	}
}

func (h *harness) file(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(h.proj, name))
	return string(b), err == nil
}

// snapshot records the bytes of each settings file, nil for a missing one.
func snapshot(t *testing.T, paths []string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			out[p] = nil
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	return out
}

// The scenario's prompts. Each agent sees the same words.
const (
	promptWrite  = "alpha: write notes.txt"
	promptChange = "bravo: change notes.txt and delete gone.txt"
	promptAfter  = "charlie: write after.txt where you are"
)

// scenarioScript answers the scenario's prompts with the agent's tool calls, one call per
// reply, and text to everything else (titles, summaries). The third prompt's file is written in
// the folder the request tells the model it is in ([fakeapi.Request.Folder]), as a real model
// would: a resumed session that still tells the model an old folder writes there.
func scenarioScript(h **harness) fakeapi.Script {
	return func(r *fakeapi.Request) fakeapi.Reply {
		hh := *h
		p := r.LastPrompt()
		var calls []fakeapi.ToolUse
		notes := filepath.Join(hh.proj, "notes.txt")
		switch {
		case len(r.Tools) == 0:
			return fakeapi.TextReply("A title")
		case strings.Contains(p, promptWrite):
			calls = []fakeapi.ToolUse{hh.a.write(hh, notes, "one\n")}
		case strings.Contains(p, promptChange):
			calls = append(hh.a.edit(hh, notes, "one", "two"), hh.a.shell(hh, "rm gone.txt"))
		case strings.Contains(p, promptAfter):
			if dir := r.Folder(); dir != "" {
				calls = []fakeapi.ToolUse{hh.a.write(hh, filepath.Join(dir, "after.txt"), "three\n")}
			}
		}
		for i := range calls {
			id := fakeapi.ToolID(p, i)
			if !r.HasToolResult(id) {
				calls[i].ID = id
				return fakeapi.Reply{Text: "Working.", ToolUses: calls[i : i+1]}
			}
		}
		return fakeapi.TextReply("done: " + p)
	}
}

// runScenario drives agent a through the scenario.
func runScenario(t *testing.T, a *agentE2E) {
	var h *harness
	h = newHarness(t, a, scenarioScript(&h))
	settings := a.settings(h)
	before := snapshot(t, settings)

	h.bin = installRewind(t, h.home, h.env(), "--yes", "--agents", a.name)
	h.rewind = filepath.Join(h.bin, "rewind")
	env := h.env()
	runIn(t, h.proj, env, "git", "init", "-q")
	runIn(t, h.proj, env, h.rewind, "init")
	if err := os.WriteFile(filepath.Join(h.proj, "gone.txt"), []byte("doomed\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	id := a.prompt(h, promptWrite, "")
	if got, _ := h.file("notes.txt"); got != "one\n" {
		t.Fatalf("after the first prompt notes.txt = %q, want one (the scripted write did not run)", got)
	}
	if got := a.prompt(h, promptChange, id); got != id {
		t.Errorf("the resumed session reported id %s, want %s", got, id)
	}
	if got, _ := h.file("notes.txt"); got != "two\n" {
		t.Fatalf("after the second prompt notes.txt = %q, want two", got)
	}
	if _, ok := h.file("gone.txt"); ok {
		t.Fatal("the scripted shell rm did not run")
	}

	// A checkpoint at each prompt, attributed to the agent, and no hook failed.
	for _, l := range readHookLog(t, h.home) {
		if l.Error != "" {
			t.Errorf("hook failed: %+v", l)
		}
	}
	var atPrompts []string
	for _, c := range listCheckpoints(t, h) {
		if c.Trigger.Kind == "hook" && c.Trigger.Event == "UserPromptSubmit" {
			atPrompts = append(atPrompts, c.Trigger.Prompt)
			if c.Trigger.Agent != a.name {
				t.Errorf("checkpoint %s attributed to %q, want %s", c.ID, c.Trigger.Agent, a.name)
			}
		}
	}
	if strings.Join(atPrompts, "|") != promptWrite+"|"+promptChange {
		t.Errorf("checkpoints at prompts, oldest first: %q, want one per prompt", atPrompts)
	}

	var res struct {
		Checkpoint string `json:"checkpoint"`
		Resume     string `json:"resume"`
		Fork       *struct {
			SessionID string `json:"session_id"`
			Path      string `json:"path"`
		} `json:"fork"`
	}
	h.rewindJSON(&res, "back", "1", "--both")
	if res.Fork == nil || res.Fork.SessionID == "" {
		t.Fatalf("rewind back 1 --both wrote no fork: %+v", res)
	}
	t.Logf("fork %s at %s; resume with: %s", res.Fork.SessionID, res.Fork.Path, res.Resume)
	if got, _ := h.file("notes.txt"); got != "one\n" {
		t.Errorf("after back 1 --both notes.txt = %q, want one (as before the second prompt)", got)
	}
	if got, _ := h.file("gone.txt"); got != "doomed\n" {
		t.Errorf("after back 1 --both gone.txt = %q, want it back", got)
	}
	if !strings.Contains(res.Resume, res.Fork.SessionID) {
		t.Errorf("resume hint %q does not name the fork", res.Resume)
	}

	n := len(h.api.Messages())
	if got := a.prompt(h, promptAfter, res.Fork.SessionID); got != res.Fork.SessionID {
		t.Errorf("resuming the fork reported session %s, want %s", got, res.Fork.SessionID)
	}
	req := lastConversationSince(t, h.api, n)
	assertPrompts(t, req, promptWrite, promptAfter)
	if bytes.Contains(req.Raw, []byte(promptChange)) {
		t.Error("the resumed fork's request mentions the second prompt")
	}
	assertWorksIn(t, req, h, nil)

	runIn(t, h.proj, env, h.rewind, "undo-restore")
	if got, _ := h.file("notes.txt"); got != "two\n" {
		t.Errorf("after undo-restore notes.txt = %q, want two", got)
	}
	if _, ok := h.file("gone.txt"); ok {
		t.Error("after undo-restore gone.txt is back; the second prompt deleted it")
	}

	uninstall(t, h)
	after := snapshot(t, settings)
	for _, p := range settings {
		if !bytes.Equal(before[p], after[p]) || (before[p] == nil) != (after[p] == nil) {
			t.Errorf("%s after --uninstall:\n%q\nbefore install:\n%q", p, after[p], before[p])
		}
	}
	if a.notProven != "" {
		t.Logf("not provable offline: %s", a.notProven)
	}
}

// assertWorksIn checks that a resumed session works in h's folder: the request after the resume
// tells the model it is there, and the third prompt's write (made where the model was told)
// landed there, and not in the folder of other, where the session came from (nil for none).
func assertWorksIn(t *testing.T, req *fakeapi.Request, h, other *harness) {
	t.Helper()
	if got := req.Folder(); got != h.proj {
		t.Errorf("after the resume the request tells the model it works in %q, want %s", got, h.proj)
	}
	if got, _ := h.file("after.txt"); got != "three\n" {
		t.Errorf("after the resume the model's write did not land in %s: after.txt = %q", h.proj, got)
	}
	if other != nil {
		if _, ok := other.file("after.txt"); ok {
			t.Errorf("after the resume the model's write landed in the source folder %s", other.proj)
		}
	}
}

// checkpointInfo is the part of `rewind list --json` the scenario reads.
type checkpointInfo struct {
	ID      string `json:"id"`
	Trigger struct {
		Kind   string `json:"kind"`
		Event  string `json:"event"`
		Agent  string `json:"agent"`
		Prompt string `json:"prompt"`
	} `json:"trigger"`
}

// listCheckpoints lists every checkpoint, oldest first.
func listCheckpoints(t *testing.T, h *harness) []checkpointInfo {
	t.Helper()
	out := runIn(t, h.proj, h.env(), h.rewind, "list", "--all", "--json")
	var cps []checkpointInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var v struct {
			Type       string         `json:"type"`
			Checkpoint checkpointInfo `json:"checkpoint"`
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("rewind list --json: %v\n%s", err, out)
		}
		if v.Type == "checkpoint" {
			cps = append([]checkpointInfo{v.Checkpoint}, cps...)
		}
	}
	return cps
}

// lastConversationSince is the newest conversation request (one offering tools) among those
// the fake API received after the first n.
func lastConversationSince(t *testing.T, api *fakeapi.Server, n int) *fakeapi.Request {
	t.Helper()
	msgs := api.Messages()
	for i := len(msgs) - 1; i >= n; i-- {
		if len(msgs[i].Tools) > 0 {
			return msgs[i]
		}
	}
	t.Fatal("the fake API received no conversation request")
	return nil
}

// uninstall runs install.sh --uninstall in h's home.
func uninstall(t *testing.T, h *harness) {
	t.Helper()
	root, _ := filepath.Abs("..")
	cmd := exec.Command(filepath.Join(root, "install.sh"), "--uninstall")
	cmd.Dir, cmd.Env = h.home, h.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh --uninstall: %v\n%s", err, out)
	} else {
		t.Logf("install.sh --uninstall:\n%s", out)
	}
}
