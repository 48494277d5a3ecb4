//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// screen is an interactive program running in a private tmux server, driven with send-keys and
// read with capture-pane, as a user would see it.
type screen struct {
	t    *testing.T
	tmux string
	sock string
}

// startScreen runs argv (no shell) in dir with exactly env, on a 160×45 terminal.
func startScreen(t *testing.T, dir string, env []string, argv ...string) *screen {
	t.Helper()
	tmux := os.Getenv("REWIND_E2E_TMUX")
	if tmux == "" {
		tmux = "tmux"
	}
	s := &screen{t: t, tmux: tmux, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	args := []string{"new-session", "-d", "-s", "e2e", "-x", "160", "-y", "45", "-c", dir, "env", "-i"}
	args = append(append(args, env...), argv...)
	// Claude Code's interactive client now and then exits within a second of starting, before
	// it draws anything (once in this stop's three CI runs; not in three runs by hand), or a few
	// seconds in, just after its first screen (once, on a loaded machine, 2026-11-24): a program
	// that is gone before its first screen or within settle of it is started again, up to twice,
	// and the test says so, with what it had drawn.
	for attempt := 1; ; attempt++ {
		s.run(args...)
		pid := strings.TrimSpace(s.run("display-message", "-p", "-t", "e2e", "#{pane_pid}"))
		t.Cleanup(func() {
			exec.Command(s.tmux, "-S", s.sock, "kill-server").Run()
			waitGone(pid)
		})
		if s.drew() || attempt == 3 {
			return s
		}
		t.Logf("%s exited before drawing its first screen; starting it again (attempt %d)", argv[0], attempt+1)
		waitGone(pid)
	}
}

// settle is how long a program must stay up after its first screen to count as started.
const settle = 3 * time.Second

// drew waits, up to 10 s, until the program shows something and is still there settle later,
// and reports whether it is; false when it exited first.
func (s *screen) drew() bool {
	var shown string
	var since time.Time
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		out, err := exec.Command(s.tmux, "-S", s.sock, "capture-pane", "-p", "-t", "e2e").Output()
		if err != nil {
			if shown != "" {
				s.t.Logf("it exited %v after its first screen, which showed:\n%s", time.Since(since).Round(time.Millisecond), shown)
			}
			return false // the session ended with the program
		}
		switch {
		case shown != "" && time.Since(since) >= settle:
			return true
		case shown == "" && strings.TrimSpace(string(out)) != "":
			shown, since = string(out), time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true // alive, if silent: the test's own waits say what is missing
}

// waitGone waits, up to 10 s, until process pid has exited. A program killed with its tmux
// server may still be writing files (Claude Code flushes its session on SIGHUP), and the test's
// temporary directories must not be removed under it.
func waitGone(pid string) {
	if pid == "" {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if _, err := os.Stat("/proc/" + pid); err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *screen) run(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(s.tmux, append([]string{"-S", s.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %q: %v: %s", args, err, out)
	}
	return string(out)
}

// capture is the visible screen text.
func (s *screen) capture() string { return s.run("capture-pane", "-p", "-t", "e2e") }

// waitFor polls the screen until it contains want, and returns the screen.
func (s *screen) waitFor(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		text := s.capture()
		if strings.Contains(text, want) {
			return text
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("screen never showed %q; it shows:\n%s", want, text)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// typeLine types text and presses Enter, as separate keystrokes the way a user would.
func (s *screen) typeLine(text string) {
	s.t.Helper()
	s.run("send-keys", "-t", "e2e", "-l", text)
	time.Sleep(300 * time.Millisecond) // let the input box take the paste before Enter
	s.run("send-keys", "-t", "e2e", "Enter")
}

func (s *screen) keys(keys ...string) {
	s.t.Helper()
	s.run(append([]string{"send-keys", "-t", "e2e"}, keys...)...)
}

// waitExit waits until the program has exited (tmux ends the session with it).
func (s *screen) waitExit() {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command(s.tmux, "-S", s.sock, "has-session", "-t", "e2e").Run() != nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("program did not exit; screen:\n%s", s.capture())
}
