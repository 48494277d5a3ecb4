package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hookDeadline is the hook deadline the tests configure: short, so a stuck
// lock costs seconds, not the default ten.
const hookDeadline = time.Second

// TestHooksNeverHurtTheAgent breaks the store in every way a hook can meet
// and fires every event at it: each run exits 0 or 1 (2 would block the
// agent), within its deadline, prints nothing on stdout, and a failure is
// one stderr line and a log entry saying why.
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
			undo := c.break_(t, w)
			defer undo()
			session := "bbbbbbbb-0000-4000-8000-000000000001"
			events := []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "SessionEnd"}
			for _, ev := range events {
				runs++
				logBefore := len(readHookLog(t, w.home))
				r := run(t, w.hookProc(ev, session))
				var errs []string
				if r.code != 0 && r.code != 1 {
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
				if r.code == 1 {
					if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "rewind-hook: error: ") {
						errs = append(errs, fmt.Sprintf("stderr is not one error line: %q", r.stderr))
					}
					if len(logs) > 0 && logs[len(logs)-1].Error == "" {
						errs = append(errs, "exit 1 but the log entry says no error")
					}
				}
				// SessionEnd and PostToolUse take no checkpoint: they must not fail
				// over a store they only update.
				checkpoints := ev != "PostToolUse" && ev != "SessionEnd"
				if c.fails && checkpoints && r.code == 0 {
					errs = append(errs, "exit 0, yet the checkpoint cannot have been taken")
				}
				if !c.fails && !c.either && r.code != 0 {
					errs = append(errs, fmt.Sprintf("failed on a store it should cope with: %s", strings.TrimSpace(r.stderr)))
				}
				if len(errs) > 0 {
					failures++
					t.Errorf("%s: %s", ev, strings.Join(errs, "; "))
				} else {
					t.Logf("%s: exit %d in %v %s", ev, r.code, r.dur.Round(time.Millisecond), strings.TrimSpace(r.stderr))
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
