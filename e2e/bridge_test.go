//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runBridgeFaults checks, in the agent's own runtime, that Rewind's bridge never stops or
// breaks an agent that has no shell hooks (pi, OpenCode: both block a tool whose handler
// throws): with the store read-only, its lock held by a stuck process, or rewind-hook missing,
// a prompt still runs its tool, the agent exits 0, and hook.log says what went wrong.
func runBridgeFaults(t *testing.T, a *agentE2E) {
	for _, fault := range []struct {
		name  string
		apply func(t *testing.T, h *harness) (undo func())
		// logs is what a hook.log entry of the fault says.
		logs string
	}{
		{"store read-only", func(t *testing.T, h *harness) func() {
			return readOnlyDir(t, storeDir(t, h.proj, h.env(), h.rewind))
		}, "read-only file system"},
		{"lock held", func(t *testing.T, h *harness) func() {
			f, err := os.OpenFile(filepath.Join(storeDir(t, h.proj, h.env(), h.rewind), "lock"), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			return func() { f.Close() }
		}, "the store is busy"},
		{"rewind-hook missing", func(t *testing.T, h *harness) func() {
			hook := filepath.Join(h.bin, "rewind-hook")
			if err := os.Rename(hook, hook+".away"); err != nil {
				t.Fatal(err)
			}
			return func() { os.Rename(hook+".away", hook) }
		}, "bridge: cannot run"},
	} {
		t.Run(strings.ReplaceAll(fault.name, " ", "-"), func(t *testing.T) {
			var h *harness
			h = newHarness(t, a, scenarioScript(&h))
			h.bin = installRewind(t, h.home, h.env(), "--yes", "--agents", a.name)
			h.rewind = filepath.Join(h.bin, "rewind")
			// A short hook deadline: a held lock costs seconds, not ten.
			config := filepath.Join(h.home, ".rewind", "config.json")
			if err := os.WriteFile(config, []byte(`{"version": 1, "tier": "balanced", "hook_deadline_ms": 1500}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			runIn(t, h.proj, h.env(), "git", "init", "-q")
			runIn(t, h.proj, h.env(), h.rewind, "init")
			undo := fault.apply(t, h)
			start := time.Now()
			a.prompt(h, promptWrite, "")
			took := time.Since(start)
			undo()
			if got, _ := h.file("notes.txt"); got != "one\n" {
				t.Fatalf("with the %s, the agent's write did not run (notes.txt = %q)", fault.name, got)
			}
			var seen []string
			found := false
			for _, l := range readHookLog(t, h.home) {
				seen = append(seen, fmt.Sprintf("%s: %s", l.Event, l.Error))
				found = found || strings.Contains(l.Error, fault.logs)
			}
			if !found {
				t.Errorf("hook.log has no entry saying %q:\n%s", fault.logs, strings.Join(seen, "\n"))
			}
			t.Logf("the prompt took %v with the %s", took.Round(time.Millisecond), fault.name)
		})
	}
}

// readOnlyDir makes dir read-only for root too: a read-only bind mount of itself.
func readOnlyDir(t *testing.T, dir string) func() {
	t.Helper()
	if os.Geteuid() != 0 {
		os.Chmod(dir, 0o555)
		return func() { os.Chmod(dir, 0o755) }
	}
	for _, args := range [][]string{{"--bind", dir, dir}, {"-o", "remount,ro,bind", dir}} {
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			t.Fatalf("mount %q: %v\n%s", args, err, out)
		}
	}
	return func() { exec.Command("umount", dir).Run() }
}

func TestPiBridgeFaults(t *testing.T) { runBridgeFaults(t, piAgent) }
