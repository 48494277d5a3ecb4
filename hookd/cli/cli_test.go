package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"rewind.dev/hookd"
)

// TestMain makes rewind-hook and a fake rewind commands of the scripts. The
// two sit in the same folder, so rewind-hook finds the fake beside itself
// exactly as it finds the real one when installed.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rewind-hook": func() {
			os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"rewind": func() { os.Exit(fakeRewind(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// fakeRewind stands in for `rewind hook`: it appends the request it got to
// $FAKE_REWIND_LOG (its deadline replaced by "ok" when it lies between now
// and 11 s from now, so scripts can cmp it) and answers as the real one
// does: no-store without <project>/.agent/rewind, else a checkpoint for
// "always" and "throttled", a skip for "none". $FAKE_REWIND_SLEEP delays
// the answer, $FAKE_REWIND_FAIL makes it fail with that message, and
// $FAKE_REWIND_NOTICE is a notice it gives (the real one gives it once).
func fakeRewind(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] != "hook" {
		fmt.Fprintf(stderr, "rewind: error: fake rewind called with %q\n", args)
		return 2
	}
	body, _ := io.ReadAll(stdin)
	var req hookd.Request
	if err := json.Unmarshal(body, &req); err != nil {
		fmt.Fprintf(stderr, "rewind: error: %v\n", err)
		return 2
	}
	if p := os.Getenv("FAKE_REWIND_LOG"); p != "" {
		var m map[string]any
		json.Unmarshal(body, &m)
		if d, ok := m["deadline_unix_ms"].(float64); ok {
			now := time.Now().UnixMilli()
			m["deadline_unix_ms"] = "ok"
			if int64(d) <= now || int64(d) > now+11000 {
				m["deadline_unix_ms"] = fmt.Sprintf("out of range: %d ms from now", int64(d)-now)
			}
		}
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		enc.Encode(m)
		f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		f.Write(line.Bytes())
		f.Close()
	}
	if d, err := time.ParseDuration(os.Getenv("FAKE_REWIND_SLEEP")); err == nil {
		time.Sleep(d)
	}
	if msg := os.Getenv("FAKE_REWIND_FAIL"); msg != "" {
		fmt.Fprintf(stderr, "rewind: error: %s\nrewind: hint: a hint rewind-hook must not repeat\n", msg)
		return 1
	}
	resp := hookd.Response{Type: "hook", Action: "skip"}
	switch _, err := os.Stat(filepath.Join(req.ProjectDir, ".agent", "rewind")); {
	case err != nil:
		resp.Reason = "no-store"
		resp.Message = "Rewind is installed, but " + req.ProjectDir + " has no checkpoint store, so nothing is checkpointed; run 'rewind init' there to start."
	case req.Checkpoint == hookd.CheckpointNone:
		resp.Reason = "none"
	default:
		resp.Action, resp.Checkpoint = "checkpoint", "20260101_000000_001"
	}
	resp.Notice = os.Getenv("FAKE_REWIND_NOTICE")
	json.NewEncoder(stdout).Encode(resp)
	return 0
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			env.Setenv("HOME", home)
			env.Setenv("FAKE_REWIND_LOG", filepath.Join(env.WorkDir, "requests.jsonl"))
			// A race-enabled binary otherwise sleeps 1 s at exit, per command.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return os.MkdirAll(home, 0o755)
		},
	})
}

// TestNeverExitTwo: whatever an agent passes, a hook run never exits 2
// (which would block the agent's tool or erase the prompt); usage errors of
// register and unregister do.
func TestNeverExitTwo(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, c := range []struct {
		args  []string
		stdin string
		want  int
	}{
		{[]string{"--bogus"}, `{}`, 1},
		{[]string{"pre-tool-use", "--bogus"}, `{}`, 1},
		{[]string{"pre-tool-use", "extra-arg"}, `{}`, 1},
		{[]string{"nonsense"}, `{}`, 1},
		{[]string{"stop"}, `not json`, 1},
		{[]string{}, ``, 1},
		{[]string{"--agent", "nobody"}, `{"hook_event_name":"Stop"}`, 1},
		{[]string{"--help"}, ``, 0},
		{[]string{"register", "--bogus"}, ``, 2},
		{[]string{"register", "--agents", "nobody"}, ``, 2},
		{[]string{"unregister", "--agents", "claude,droid", "--settings", "x.json"}, ``, 2},
	} {
		var stdout, stderr bytes.Buffer
		got := Main(context.Background(), c.args, bytes.NewBufferString(c.stdin), &stdout, &stderr)
		if got != c.want {
			t.Errorf("rewind-hook %q: exit %d, want %d (stderr %q)", c.args, got, c.want, stderr.String())
		}
		if stdout.Len() > 0 && c.want != 0 {
			t.Errorf("rewind-hook %q wrote to stdout: %q", c.args, stdout.String())
		}
	}
}

// TestDeadline: the request carries the deadline rewind must meet — the
// configured one (default 10 s) less a margin, and at most 1 s for
// SessionEnd, which Claude Code gives about 1.5 s in all.
func TestDeadline(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLAUDE_PROJECT_DIR", t.TempDir())
	for _, c := range []struct {
		event    string
		min, max int64 // ms from now
	}{
		{"Stop", 9000, 10000},
		{"SessionEnd", 500, 1000},
	} {
		var stdout, stderr bytes.Buffer
		in := `{"session_id":"s","cwd":"/p","hook_event_name":"` + c.event + `"}`
		before := time.Now().UnixMilli()
		if code := Main(context.Background(), []string{"--agent", "claude", "--dry-run"}, bytes.NewBufferString(in), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.event, code, stderr.String())
		}
		var req hookd.Request
		if err := json.Unmarshal(stdout.Bytes(), &req); err != nil {
			t.Fatal(err)
		}
		if d := req.DeadlineUnixMS - before; d < c.min || d > c.max {
			t.Errorf("%s: deadline %d ms ahead, want %d..%d", c.event, d, c.min, c.max)
		}
	}
}

// TestIntervalSkipNeedsNoRewind: inside the anti-spam interval, with
// session.json already current, rewind-hook answers the skip itself (and
// logs it); a new session still goes to rewind, which here is missing.
func TestIntervalSkipNeedsNoRewind(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("REWIND_HOME", "")
	t.Setenv("CLAUDE_PROJECT_DIR", proj)
	store := filepath.Join(proj, ".agent", "rewind")
	os.MkdirAll(store, 0o755)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	tp := filepath.Join(home, "t.jsonl")
	os.WriteFile(filepath.Join(store, "hook-state.json"), []byte(`{"version":1,"last_checkpoint_at":"`+now+`"}`), 0o644)
	os.WriteFile(filepath.Join(store, "session.json"), []byte(`{"version":1,"agent":"claude","session_id":"s1","transcript_path":"`+tp+`","updated_at":"`+now+`"}`), 0o644)
	run := func(session string) (int, string) {
		in := `{"session_id":"` + session + `","transcript_path":"` + tp + `","cwd":"` + proj + `","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"` + proj + `/a.go"}}`
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), []string{"pre-tool-use", "--agent", "claude"}, strings.NewReader(in), &stdout, &stderr)
		return code, stderr.String()
	}
	if code, stderr := run("s1"); code != 0 || stderr != "" {
		t.Fatalf("inside the interval: exit %d, stderr %q", code, stderr)
	}
	log, _ := os.ReadFile(filepath.Join(home, ".rewind", "logs", "hook.log"))
	if !bytes.Contains(log, []byte(`"action":"skip","reason":"interval"`)) {
		t.Errorf("hook.log does not record the interval skip:\n%s", log)
	}
	if code, stderr := run("s2"); code != 1 || !strings.Contains(stderr, "rewind is not installed beside rewind-hook") {
		t.Errorf("a new session: exit %d, stderr %q; want rewind called", code, stderr)
	}
}
