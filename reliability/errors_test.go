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

// TestBadInputClearErrors gives the real rewind every kind of bad input the
// issue met — transcripts that are FIFOs, folders, devices or missing, gc
// values that mean nothing, a -C folder that does not exist — and checks
// each run: it ends at once (never blocks), exits 1 or 2 with one error line
// naming the thing and a hint where one helps, prints nothing on stdout,
// and changes nothing: no checkpoint, no folder, the tree as it was.
func TestBadInputClearErrors(t *testing.T) {
	w := newWorld(t, filepath.Join(workDir(t), "w"), 100, 1)
	fifo := filepath.Join(w.root, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(w.root, "no-such-project")
	cases := []struct {
		name string
		args []string
		want string // in the error line
	}{
		{"save, FIFO transcript", []string{"save", "--transcript", fifo}, "not a regular file (a FIFO)"},
		{"save, folder transcript", []string{"save", "--transcript", w.home}, "not a regular file (a folder)"},
		{"save, device transcript", []string{"save", "--transcript", "/dev/null"}, "not a regular file (a device)"},
		{"back, FIFO transcript", []string{"back", "1", "--transcript", fifo}, "not a regular file (a FIFO)"},
		{"back, missing transcript", []string{"back", "1", "--transcript", filepath.Join(w.root, "gone.jsonl")}, "no such file or directory"},
		{"back, both, missing transcript", []string{"back", "2", "--both", "--yes", "--transcript", filepath.Join(w.root, "gone.jsonl")}, "no such file or directory"},
		{"gc --keep 0", []string{"gc", "--keep", "0"}, "--keep takes a number"},
		{"gc --keep -3", []string{"gc", "--keep", "-3"}, "--keep takes a number"},
		{"gc --max-bytes 0", []string{"gc", "--max-bytes", "0"}, "--max-bytes takes a size"},
		{"gc --max-bytes -1G", []string{"gc", "--max-bytes", "-1G"}, "--max-bytes takes a size"},
		{"gc --max-bytes 2Q", []string{"gc", "--max-bytes", "2Q"}, "--max-bytes takes a size"},
		{"gc --max-age 0h", []string{"gc", "--max-age", "0h"}, "--max-age takes an age"},
		{"-C a missing folder, save", []string{"-C", missing, "save"}, "no such file or directory"},
		{"-C a missing folder, init", []string{"-C", missing, "init"}, "no such file or directory"},
		{"init in HOME", []string{"-C", w.home, "init"}, "it is your home folder"},
	}
	runs, failures := 0, 0
	for _, c := range cases {
		runs++
		before, tree := checkpoints(t, w.project, w.env), treeDigest(t, w.project)
		args := c.args
		if args[0] != "-C" {
			args = append(args, "-C", w.project)
		}
		r := run(t, proc{name: "rewind", args: args, env: w.env})
		var errs []string
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		switch {
		case r.code != 1 && r.code != 2:
			errs = append(errs, fmt.Sprintf("exit %d, want 1 or 2", r.code))
		case r.dur > 5*time.Second:
			errs = append(errs, fmt.Sprintf("took %v", r.dur))
		case !strings.HasPrefix(lines[0], "rewind: error: ") || !strings.Contains(lines[0], c.want):
			errs = append(errs, fmt.Sprintf("the error line does not say %q: %q", c.want, lines[0]))
		case len(lines) > 2 || len(lines) == 2 && !strings.HasPrefix(lines[1], "rewind: hint: "):
			errs = append(errs, fmt.Sprintf("more than an error and a hint on stderr: %q", r.stderr))
		case r.stdout != "":
			errs = append(errs, fmt.Sprintf("printed on stdout: %q", r.stdout))
		}
		if got := checkpoints(t, w.project, w.env); len(got) != len(before) {
			errs = append(errs, "it added a checkpoint")
		}
		if got := treeDigest(t, w.project); got.sum() != tree.sum() {
			errs = append(errs, "it changed the tree: "+tree.diff(got))
		}
		if _, err := os.Stat(missing); err == nil {
			errs = append(errs, "it created the missing -C folder")
		}
		if _, err := os.Stat(filepath.Join(w.home, ".agent")); err == nil {
			errs = append(errs, "it created a store in HOME")
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("%s: %s", c.name, strings.Join(errs, "; "))
		}
	}
	figures(t, "bad-input-clear-errors", runs, runs, failures)
}

// TestHooksWithANonRegularTranscript: a hook whose transcript_path is a FIFO
// (recorded into session.json, so every later hook meets it too) takes its
// checkpoint of the tree within its deadline, event after event, and the
// checkpoint says why it holds no transcript.
func TestHooksWithANonRegularTranscript(t *testing.T) {
	w := newWorld(t, filepath.Join(workDir(t), "w"), 100, 1)
	writeFile(t, filepath.Join(w.home, ".rewind/config.json"), []byte(fmt.Sprintf(`{"version":1,"tier":"aggressive","hook_deadline_ms":%d}`, hookDeadline.Milliseconds())), 0o644)
	fifo := filepath.Join(filepath.Dir(w.transcript), "dddddddd-0000-4000-8000-000000000001.jsonl") // (in Claude Code's session folders)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	w.transcript = fifo
	runs, failures := 0, 0
	for i, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "UserPromptSubmit", "Stop"} {
		runs++
		before := len(checkpoints(t, w.project, w.env))
		r := run(t, w.hookProc(ev, "dddddddd-0000-4000-8000-000000000001"))
		var errs []string
		if r.code != 0 || r.dur > hookDeadline+time.Second {
			errs = append(errs, fmt.Sprintf("exit %d after %v: %s", r.code, r.dur, strings.TrimSpace(r.stderr)))
		}
		if ev == "UserPromptSubmit" && len(checkpoints(t, w.project, w.env)) != before+1 {
			errs = append(errs, "no checkpoint at a prompt")
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("event %d (%s): %s", i, ev, strings.Join(errs, "; "))
		}
	}
	r := mustRun(t, proc{name: "rewind", args: []string{"show", "@0", "--json", "-C", w.project}, env: w.env})
	if !strings.Contains(r.stdout, "not a regular file") {
		failures++
		t.Errorf("the hook's checkpoint does not say why it holds no transcript: %s", r.stdout)
	}
	figures(t, "hooks-with-a-fifo-transcript", runs, runs, failures)
}
