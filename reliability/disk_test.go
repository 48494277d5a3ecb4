//go:build reliability && unix

package reliability

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// diskWorld is a project (with its store) on a 12 MiB tmpfs, HOME and the
// transcript elsewhere; the tree is incompressible, so its archive is as
// big as it is.
func diskWorld(t *testing.T) *world {
	t.Helper()
	base := workDir(t)
	root := filepath.Join(base, "w")
	mountTmpfs(t, filepath.Join(root, "p"), "12m")
	w := &world{root: root, home: filepath.Join(root, "home"), project: filepath.Join(root, "p"),
		ids: map[string]string{}, digests: map[string]digest{}, sums: map[string]string{}, hashes: map[string]string{}}
	w.transcript = filepath.Join(w.home, ".claude/projects/-p/11111111-2222-4333-8444-555555555555.jsonl")
	w.env = []string{"HOME=" + w.home}
	genTranscript(t, w.transcript, 256<<10, 1)
	randomTree(t, w.project, 120, 24<<10, "a")
	w.rewind(t, "init", "--mode", "project")
	w.save(t, "A")
	randomTree(t, w.project, 60, 24<<10, "b") // half the files get new content
	w.state(t, "B")
	return w
}

func randomTree(t *testing.T, dir string, n, size int, salt string) {
	t.Helper()
	for i := range n {
		b := make([]byte, size)
		rand.Read(b)
		writeFile(t, filepath.Join(dir, fmt.Sprintf("d%d/f%03d.bin", i%6, i)), b, 0o644)
	}
}

// TestFullDisk sweeps the free space left on the project's disk from none
// to enough, running save (and, in a second world, restore) at every step:
// a run that hits ENOSPC fails with an error saying the disk is full and
// where, leaves nothing half-written, and older checkpoints stay whole.
func TestFullDisk(t *testing.T) {
	runs, failures, faults := 0, 0, 0
	for _, op := range []string{"save", "restore"} {
		t.Run(op, func(t *testing.T) {
			w := diskWorld(t)
			store := filepath.Join(w.project, ".agent/rewind")
			ids := checkpoints(t, w.project, w.env)
			succeeded := false
			for free := int64(0); free <= 8<<20 && !succeeded; free += 96 << 10 {
				runs++
				filler := fillDisk(t, store, free)
				var r result
				if op == "save" {
					r = run(t, proc{name: "rewind", args: []string{"save", "--transcript", w.transcript, "B", "-C", w.project}, env: w.env})
				} else {
					r = run(t, proc{name: "rewind", args: []string{"restore", w.ids["A"], "--code-only", "--yes", "-C", w.project}, env: w.env})
				}
				os.Remove(filler)
				var errs []string
				if r.code == 0 {
					succeeded = true
					t.Logf("%s succeeds with %d KiB free", op, free>>10)
				} else {
					faults++
					msg := strings.TrimSpace(r.stderr)
					if !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, w.project) {
						errs = append(errs, fmt.Sprintf("exit %d, but the error does not say the disk is full and where: %q", r.code, msg))
					}
					// A failed restore may keep the backup checkpoint it took: whole, of the tree as it is.
					if got := checkpoints(t, w.project, w.env); !slices.Equal(got, ids) {
						for _, id := range got {
							if slices.Contains(ids, id) {
								continue
							}
							if d, err := restoredDigest(t, w, id); op == "save" || err != nil || d.sum() != w.sums["B"] {
								errs = append(errs, fmt.Sprintf("the failed %s added checkpoint %s (%v)", op, id, err))
							}
						}
						ids = got
					}
					if got := treeDigest(t, w.project); got.sum() != w.sums["B"] {
						errs = append(errs, "the failed "+op+" changed the tree: "+w.digests["B"].diff(got))
					}
					if l := leftovers(w.project); len(l) > 0 {
						errs = append(errs, fmt.Sprintf("half-written files left: %s", strings.Join(rel(w.root, l), ", ")))
					}
				}
				if probs, _ := validate(t, w.project, w.env); len(probs) > 0 {
					errs = append(errs, fmt.Sprintf("validate: %v", probs))
				}
				if d, err := restoredDigest(t, w, w.ids["A"]); err != nil || d.sum() != w.sums["A"] {
					errs = append(errs, fmt.Sprintf("the older checkpoint A is damaged: %v", err))
				}
				if len(errs) > 0 {
					failures++
					t.Errorf("%s with %d KiB free: %s", op, free>>10, strings.Join(errs, "\n\t"))
				}
			}
			if !succeeded {
				t.Errorf("%s never succeeded, even with 8 MiB free", op)
			}
			if op == "restore" {
				if got := treeDigest(t, w.project); got.sum() != w.sums["A"] {
					t.Errorf("the restore that succeeded did not restore A: %s", w.digests["A"].diff(got))
				}
			}
		})
	}
	figures(t, "full-disk", runs, faults, failures)
}

// TestReadOnlyStore: with the store on a read-only mount, save and restore
// fail with a clear error naming it, and change nothing; list and validate
// still work.
func TestReadOnlyStore(t *testing.T) {
	w := newWorld(t, filepath.Join(workDir(t), "w"), 200, 1)
	store := filepath.Join(w.project, ".agent/rewind")
	undo := readOnly(t, store)
	defer undo()
	failures := 0
	for _, args := range [][]string{
		{"save", "--transcript", w.transcript, "x"},
		{"restore", w.ids["A"], "--code-only", "--yes"},
		{"back", "1", "--both", "--transcript", w.transcript},
		{"undo-restore"},
		{"gc", "--keep", "1"},
		{"pin", w.ids["A"], "keep"},
	} {
		r := run(t, proc{name: "rewind", args: append(args, "-C", w.project), env: w.env})
		msg := strings.TrimSpace(r.stderr)
		first := strings.SplitN(msg, "\n", 2)[0]
		var errs []string
		if r.code == 0 {
			errs = append(errs, "succeeded on a read-only store")
		} else if args[0] != "undo-restore" && (!strings.Contains(first, "read-only file system") || !strings.Contains(first, store)) {
			errs = append(errs, fmt.Sprintf("the error does not say the store %s is read-only: %q", store, msg))
		}
		if got := treeDigest(t, w.project); got.sum() != w.sums["C"] {
			errs = append(errs, "the tree changed: "+w.digests["C"].diff(got))
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("rewind %s: %s", strings.Join(args, " "), strings.Join(errs, "; "))
		}
	}
	for _, args := range [][]string{{"list"}, {"validate"}, {"status"}} {
		if r := run(t, proc{name: "rewind", args: append(args, "-C", w.project), env: w.env}); r.code != 0 {
			failures++
			t.Errorf("rewind %s on a read-only store: exit %d: %s", args[0], r.code, r.stderr)
		}
	}
	figures(t, "read-only-store", 9, 9, failures)
}
