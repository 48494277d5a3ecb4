//go:build unix

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

// TestBusyStoreSaysWhoAndGivesUp: while a real rewind holds the store's
// lock (a save stopped with SIGSTOP once it has it), another save says
// after a second who holds it — pid and command — and gives up after the
// bounded wait with an error naming it; a hook gives up well inside its
// deadline. Once the holder goes on, both work again.
func TestBusyStoreSaysWhoAndGivesUp(t *testing.T) {
	runs, failures := 0, 0
	for round := range lockRounds {
		runs++
		w := newWorld(t, filepath.Join(workDir(t), "w"), 300, 1)
		writeFile(t, filepath.Join(w.home, ".rewind/config.json"), []byte(fmt.Sprintf(`{"version":1,"tier":"aggressive","hook_deadline_ms":%d}`, hookDeadline.Milliseconds())), 0o644)
		lock := filepath.Join(w.project, ".agent/rewind/lock")
		holder := proc{name: "rewind", args: []string{"save", "the holder", "-C", w.project}, env: w.env}
		cmd := holder.command(t.Context())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := fmt.Sprintf("pid %d", cmd.Process.Pid)
		for deadline := time.Now().Add(10 * time.Second); ; {
			if b, _ := os.ReadFile(lock); strings.Contains(string(b), pid) {
				cmd.Process.Signal(syscall.SIGSTOP) // it holds the lock
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the holder never took the lock: %q", lockText(lock))
			}
		}
		var errs []string
		start := time.Now()
		r := run(t, proc{name: "rewind", args: []string{"save", "the waiter", "-C", w.project}, env: append([]string{"REWIND_LOCK_WAIT=2s"}, w.env...)})
		took := time.Since(start)
		if !strings.Contains(r.stderr, "waiting for the store's lock, held by "+pid+" (rewind save") {
			errs = append(errs, fmt.Sprintf("the waiting save did not say who holds the lock: %q", r.stderr))
		}
		if r.code != 11 || !strings.Contains(r.stderr, "held by "+pid) || took > 4*time.Second {
			errs = append(errs, fmt.Sprintf("the waiting save: exit %d after %v, want 11 (busy) after about 2s naming %s: %q", r.code, took, pid, r.stderr))
		}
		h := run(t, w.hookProc("UserPromptSubmit", "cccccccc-0000-4000-8000-000000000001"))
		if h.code != 1 || h.dur > hookDeadline+time.Second || !strings.Contains(h.stderr, pid) {
			errs = append(errs, fmt.Sprintf("a hook on the busy store: exit %d after %v (deadline %v): %q", h.code, h.dur, hookDeadline, h.stderr))
		}
		cmd.Process.Signal(syscall.SIGCONT)
		if err := cmd.Wait(); err != nil {
			errs = append(errs, fmt.Sprintf("the holder, once it went on: %v", err))
		}
		if r := run(t, proc{name: "rewind", args: []string{"save", "after", "-C", w.project}, env: w.env}); r.code != 0 {
			errs = append(errs, fmt.Sprintf("a save once the lock is free: exit %d: %s", r.code, r.stderr))
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("round %d: %s", round, strings.Join(errs, "\n\t"))
		}
	}
	figures(t, "busy-store", runs, 2*runs, failures)
}

func lockText(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
