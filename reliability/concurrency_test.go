//go:build unix

package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hookInput is what Claude Code sends a hook.
func hookInput(event, session, transcript, cwd string) []byte {
	in := map[string]any{
		"session_id": session, "transcript_path": transcript, "cwd": cwd,
		"hook_event_name": event, "permission_mode": "default",
	}
	switch event {
	case "SessionStart":
		in["source"] = "startup"
	case "UserPromptSubmit":
		in["prompt"] = "make it faster"
	case "PreToolUse", "PostToolUse":
		in["tool_name"] = "Edit"
		in["tool_input"] = map[string]any{"file_path": filepath.Join(cwd, "d00/s0/f0000.txt"), "old_string": "a", "new_string": "b"}
		in["tool_use_id"] = "toolu_1"
	case "Stop":
		in["stop_hook_active"] = false
	case "PreCompact":
		in["trigger"] = "auto"
	case "SessionEnd":
		in["reason"] = "other"
	}
	b, _ := json.Marshal(in)
	return b
}

// hookProc is rewind-hook as Claude Code runs it for event.
func (w *world) hookProc(event, session string) proc {
	env := append([]string{"CLAUDECODE=1", "CLAUDE_PROJECT_DIR=" + w.project}, w.env...)
	if event == "SessionStart" {
		env = append(env, "CLAUDE_ENV_FILE="+filepath.Join(w.root, "env-"+session))
	}
	return proc{name: "rewind-hook", env: env, dir: w.project, stdin: hookInput(event, session, w.transcript, w.project)}
}

type hookLog struct {
	Event, Action, Checkpoint, Reason, Error, SessionID string
	EnvFile                                             string `json:"env_file"`
}

// readHookLog reads ~/.rewind/logs/hook.log.
func readHookLog(t testing.TB, home string) []hookLog {
	t.Helper()
	f, err := os.Open(filepath.Join(home, ".rewind/logs/hook.log"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []hookLog
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l hookLog
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Errorf("hook.log line is not JSON: %q", sc.Text())
			continue
		}
		out = append(out, l)
	}
	return out
}

var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "UserPromptSubmit", "PreToolUse"}

// TestConcurrentHooksAndRestore fires 16 hooks of one session at once with a
// restore racing them: every hook succeeds or skips cleanly, checkpoint ids
// are unique, every checkpoint holds a whole tree (before or after the
// restore, never a mixture), the store validates, and session.json keeps
// every update (the SessionStart's env file survives the other events).
func TestConcurrentHooksAndRestore(t *testing.T) {
	base := workDir(t)
	w := newWorld(t, filepath.Join(base, "w"), concFiles, 1)
	// The aggressive tier checkpoints at Stop and on every edit: the most contention.
	writeFile(t, filepath.Join(w.home, ".rewind/config.json"), []byte(`{"version":1,"tier":"aggressive"}`+"\n"), 0o644)
	failures := 0
	runs := 0
	for round := range concRounds {
		session := fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", round)
		target, targetState := "A", "A"
		if round%2 == 1 {
			target, targetState = "B", "B"
		}
		before := map[string]bool{}
		for _, id := range checkpoints(t, w.project, w.env) {
			before[id] = true
		}
		prevLog := len(readHookLog(t, w.home))
		from := treeDigest(t, w.project).sum()

		var wg sync.WaitGroup
		results := make([]result, 17)
		startGate := make(chan struct{})
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-startGate
				results[i] = run(t, w.hookProc(hookEvents[i%len(hookEvents)], session))
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startGate
			time.Sleep(time.Duration(round%4) * 20 * time.Millisecond)
			results[16] = run(t, proc{name: "rewind", args: []string{"restore", w.ids[target], "--code-only", "--yes", "-C", w.project}, env: w.env})
		}()
		close(startGate)
		wg.Wait()
		runs += 17

		var errs []string
		for i, r := range results[:16] {
			if r.code != 0 {
				errs = append(errs, fmt.Sprintf("hook %d (%s) exit %d: %s", i, hookEvents[i%len(hookEvents)], r.code, strings.TrimSpace(r.stderr)))
			}
		}
		if results[16].code != 0 {
			errs = append(errs, fmt.Sprintf("restore exit %d: %s", results[16].code, strings.TrimSpace(results[16].stderr)))
		}
		logs := readHookLog(t, w.home)[prevLog:]
		if len(logs) != 16 {
			errs = append(errs, fmt.Sprintf("hook.log has %d new entries, want 16", len(logs)))
		}
		seen := map[string]bool{}
		for _, l := range logs {
			if l.Error != "" {
				errs = append(errs, fmt.Sprintf("hook %s logged error %q", l.Event, l.Error))
			}
			if l.Action != "checkpoint" && l.Action != "skip" {
				errs = append(errs, fmt.Sprintf("hook %s: action %q", l.Event, l.Action))
			}
			if l.Checkpoint != "" {
				if seen[l.Checkpoint] {
					errs = append(errs, "checkpoint id "+l.Checkpoint+" reported twice")
				}
				seen[l.Checkpoint] = true
			}
		}
		now := checkpoints(t, w.project, w.env)
		present := map[string]bool{}
		for _, id := range now {
			if present[id] {
				errs = append(errs, "checkpoint id "+id+" listed twice")
			}
			present[id] = true
		}
		for id := range seen {
			if !present[id] {
				errs = append(errs, "hook checkpoint "+id+" is not in the store")
			}
		}
		// Every new checkpoint holds a whole tree: the one before the restore or the one after.
		for _, id := range now {
			if before[id] {
				continue
			}
			d, err := restoredDigest(t, w, id)
			if err != nil {
				errs = append(errs, fmt.Sprintf("checkpoint %s: %v", id, err))
			} else if s := d.sum(); s != from && s != w.sums[targetState] {
				errs = append(errs, fmt.Sprintf("checkpoint %s holds a tree that is neither before nor after the restore: %s", id, w.digests[targetState].diff(d)))
			}
		}
		if got := treeDigest(t, w.project); got.sum() != w.sums[targetState] {
			errs = append(errs, "tree after the restore: "+w.digests[targetState].diff(got))
		}
		if probs, staging := validate(t, w.project, w.env); len(probs) > 0 || staging {
			errs = append(errs, fmt.Sprintf("validate: %v (staging left: %v)", probs, staging))
		}
		var sess struct {
			Agent          string `json:"agent"`
			TranscriptPath string `json:"transcript_path"`
			SessionID      string `json:"session_id"`
			EnvFile        string `json:"env_file"`
		}
		b, err := os.ReadFile(filepath.Join(w.project, ".agent/rewind/session.json"))
		if err != nil || json.Unmarshal(b, &sess) != nil {
			errs = append(errs, fmt.Sprintf("session.json unreadable: %v %q", err, b))
		}
		if sess.SessionID != session || sess.TranscriptPath != w.transcript || sess.Agent != "claude" ||
			sess.EnvFile != filepath.Join(w.root, "env-"+session) {
			errs = append(errs, fmt.Sprintf("session.json lost an update: %+v", sess))
		}
		if hs, err := os.ReadFile(filepath.Join(w.project, ".agent/rewind/hook-state.json")); err != nil || !json.Valid(hs) {
			errs = append(errs, fmt.Sprintf("hook-state.json: %v %q", err, hs))
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("round %d:\n\t%s", round, strings.Join(errs, "\n\t"))
		}
	}
	figures(t, "concurrency/hooks+restore", runs, runs, failures)
}

// appender appends unique whole lines to path with O_APPEND writes, as an
// agent does, until stopped; it returns every line it wrote.
type appender struct {
	path  string
	stop  atomic.Bool
	lines [][]byte
	done  chan struct{}
}

func startAppender(t testing.TB, path string, tag string) *appender {
	a := &appender{path: path, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for i := 0; !a.stop.Load(); i++ {
			line := fmt.Appendf(nil, `{"type":"assistant","uuid":"%s-%06d","message":{"role":"assistant","content":"appended %s"}}`+"\n", tag, i, strings.Repeat("z", 200+i%700))
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Errorf("append: %v", err)
				return
			}
			_, err = f.Write(line)
			f.Close()
			if err != nil {
				t.Errorf("append: %v", err)
				return
			}
			a.lines = append(a.lines, line)
			if i%8 == 0 {
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	return a
}

func (a *appender) finish() [][]byte {
	a.stop.Store(true)
	<-a.done
	return a.lines
}

// TestForkWhileAgentAppends: a fork taken while the agent appends holds
// exactly the prefix; a truncation loses no appended byte — every appended
// line is in the backup or still in the transcript, and what went into the
// backup is reported.
func TestForkWhileAgentAppends(t *testing.T) {
	base := workDir(t)
	failures, runs := 0, 0
	for round := range appendRounds {
		dir := filepath.Join(base, fmt.Sprint(round))
		tpath := filepath.Join(dir, "11111111-2222-4333-8444-555555555555.jsonl")
		genTranscript(t, tpath, 2<<20, uint64(round))
		orig, _ := os.ReadFile(tpath)
		off := int64(bytes.LastIndexByte(orig[:len(orig)*2/3], '\n') + 1)

		// Fork.
		a := startAppender(t, tpath, fmt.Sprintf("f%d", round))
		r := run(t, proc{name: "rewind-fork", args: []string{"create", "--from", tpath, "--offset", fmt.Sprint(off), "--agent", "claude"}})
		a.finish()
		runs++
		var f struct{ Path string }
		json.Unmarshal([]byte(r.stdout), &f)
		fork, err := os.ReadFile(f.Path)
		if r.code != 0 || err != nil || !bytes.HasPrefix(fork, orig[:off]) || wholeJSONL(fork) != nil ||
			bytes.Count(fork[off:], []byte("\n")) > 1 {
			failures++
			t.Errorf("round %d: fork (exit %d, %v) is not the exact prefix of %d bytes (+ a title line): %d bytes; %s",
				round, r.code, err, off, len(fork), r.stderr)
		}

		// Truncate.
		before, _ := os.ReadFile(tpath)
		backups := filepath.Join(dir, "backups")
		a = startAppender(t, tpath, fmt.Sprintf("t%d", round))
		time.Sleep(time.Millisecond)
		r = run(t, proc{name: "rewind-fork", args: []string{"truncate", "--from", tpath, "--offset", fmt.Sprint(off), "--backup-dir", backups}})
		appended := a.finish()
		runs++
		var tr struct {
			Backup        string `json:"backup"`
			AppendedBytes int64  `json:"appended_bytes"`
		}
		json.Unmarshal([]byte(r.stdout), &tr)
		live, _ := os.ReadFile(tpath)
		back, err := os.ReadFile(tr.Backup)
		var errs []string
		if r.code != 0 || err != nil {
			errs = append(errs, fmt.Sprintf("truncate exit %d (%v): %s", r.code, err, r.stderr))
		}
		if !bytes.HasPrefix(back, before) {
			errs = append(errs, "backup does not start with the transcript as it was")
		}
		if !bytes.HasPrefix(live, orig[:off]) || wholeJSONL(live) != nil {
			errs = append(errs, fmt.Sprintf("live transcript is not the prefix plus whole lines: %v", wholeJSONL(live)))
		}
		var lost int
		for _, l := range appended {
			if !bytes.Contains(back[min(len(back), len(before)):], l) && !bytes.Contains(live[min(int(off), len(live)):], l) {
				lost++
			}
		}
		if lost > 0 {
			errs = append(errs, fmt.Sprintf("%d of %d appended lines are neither in the backup nor in the transcript", lost, len(appended)))
		}
		if extra := int64(len(back)) - int64(len(before)); err == nil && (tr.AppendedBytes < 0 || tr.AppendedBytes > extra) {
			errs = append(errs, fmt.Sprintf("appended_bytes %d, but the backup holds %d bytes more than the transcript had", tr.AppendedBytes, extra))
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("round %d: %s", round, strings.Join(errs, "; "))
		}
	}
	figures(t, "concurrency/append+fork+truncate", runs, runs, failures)
}
