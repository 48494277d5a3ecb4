//go:build unix

package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lookalikes are files and folders of the user's named the way Rewind names
// its own temporary things: a restore's staging folder, a layer's
// whiteouts, an atomic write's temporary file, the store's folders.
var lookalikes = map[string]string{
	".rewind-restore-notes/todo.txt":                          "todo\n",
	".rewind-restore-notes/lock":                              "",
	".rewind-restore-file":                                    "a file\n",
	".rewind-restore-0123456789abcdef01234567deadbeef/lock":   "rewind-snap restore staging folder\n",
	".rewind-restore-0123456789abcdef01234567deadbeef/staged": "1\n",
	".wh.gone":                     "",
	"d00/.wh..wh..opq":             "",
	"d00/.main.go.tmp-1234":        "temp-like\n",
	"d00/.main.go.rewind-tmp-1234": "temp-like\n",
	"staging/x":                    "x\n",
	"layers/1.tar.gz":              "not an archive\n",
}

// TestNamesRewindUses: files named like Rewind's own are captured, restored
// and never deleted for their names — also by the restore that follows a
// killed one and removes the staging folder it left — and the user's
// <transcript>.rewind-undo survives an undone in-place cut.
func TestNamesRewindUses(t *testing.T) {
	w := newWorld(t, filepath.Join(workDir(t), "w"), 200, 1)
	for p, body := range lookalikes {
		writeFile(t, filepath.Join(w.project, p), []byte(body), 0o644)
	}
	undoName := w.transcript + ".rewind-undo"
	writeFile(t, undoName, []byte("the user's own\n"), 0o644)
	w.save(t, "N1")
	for p := range lookalikes {
		if _, ok := w.digests["N1"][p]; !ok {
			t.Fatalf("%s is not in the tree a checkpoint holds", p)
		}
	}
	mutateTree(t, w.project, 9)
	for p, body := range lookalikes { // in both checkpoints, so no restore may remove them
		writeFile(t, filepath.Join(w.project, p), []byte(body), 0o644)
	}
	w.save(t, "N2")
	runs, kills, failures := 0, 0, 0
	for round := range namesRounds {
		runs++
		var errs []string
		fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
		restore := proc{name: "rewind", args: []string{"restore", w.ids["N1"], "--code-only", "--yes", "-C", w.project}, env: w.env}
		if killWhen(t, restore, func() bool {
			des, _ := os.ReadDir(w.project)
			for _, de := range des {
				if stagingFolder(filepath.Join(w.project, de.Name())) {
					return true
				}
			}
			return false
		}) {
			kills++
		}
		for p, body := range lookalikes {
			if b, err := os.ReadFile(filepath.Join(w.project, p)); err != nil || string(b) != body {
				fail("after a killed restore %s is %q (%v)", p, b, err)
			}
		}
		// A loaded machine may deliver the kill after the restore began to change
		// the tree: what undo-restore brings back is the tree this restore met.
		met := treeDigest(t, w.project)
		if r := run(t, restore); r.code != 0 {
			fail("restore after the killed one: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
		}
		if got := treeDigest(t, w.project); got.sum() != w.sums["N1"] {
			fail("the restore did not bring back N1: %s", w.digests["N1"].diff(got))
		}
		for _, l := range leftovers(w.project) {
			p, _ := filepath.Rel(w.project, l)
			if _, mine := lookalikes[filepath.ToSlash(p)]; !mine && !strings.HasPrefix(p, "staging/") {
				fail("left behind: %s", p)
			}
		}
		if r := run(t, proc{name: "rewind", args: []string{"undo-restore", "-C", w.project}, env: w.env}); r.code != 0 {
			fail("undo-restore: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
		}
		if got := treeDigest(t, w.project); got.sum() != met.sum() {
			fail("undo-restore did not bring back the tree before the restore: %s", met.diff(got))
		}
		back := []string{"back", "1", "--in-place", "--transcript", w.transcript, "--agent", "claude", "-C", w.project}
		if r := run(t, proc{name: "rewind", args: back, env: w.env}); r.code != 0 {
			fail("back --in-place: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
		}
		if r := run(t, proc{name: "rewind", args: []string{"undo-restore", "-C", w.project}, env: w.env}); r.code != 0 {
			fail("undo-restore of back: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
		}
		if b, err := os.ReadFile(undoName); err != nil || string(b) != "the user's own\n" {
			fail("%s is %q (%v) after undoing an in-place cut", filepath.Base(undoName), b, err)
		}
		if probs, _ := validate(t, w.project, w.env); len(probs) > 0 {
			fail("validate: %v", probs)
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("round %d: %s", round, strings.Join(errs, "\n\t"))
		}
	}
	figures(t, "names-rewind-uses", runs, kills, failures)
}
