//go:build unix

package reliability

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// storeDamages are the ways a file of the store breaks.
var storeDamages = []struct {
	name   string
	damage func(p string)
}{
	{"removed", func(p string) { os.Remove(p) }},
	{"truncated", func(p string) { b, _ := os.ReadFile(p); os.WriteFile(p, b[:len(b)/2], 0o644) }},
	{"a flipped byte", func(p string) { b, _ := os.ReadFile(p); b[len(b)/2] ^= 0x40; os.WriteFile(p, b, 0o644) }},
	{"garbage", func(p string) {
		b, _ := os.ReadFile(p)
		for i := range b {
			b[i] = byte(i*7 + 3)
		}
		os.WriteFile(p, b, 0o644)
	}},
}

// TestDamageSweep damages every file a chain of checkpoints is read from,
// in every way, one at a time, and checks with the real binaries:
//   - validate and restore agree: a checkpoint validate calls healthy
//     restores whole (tree and chat, into an emptied project), one it flags
//     is refused;
//   - a save after the damage builds on nothing damaged: it restores;
//   - gc --keep 1 deletes nothing a checkpoint might still need: every
//     checkpoint that restored before and is still listed restores after.
func TestDamageSweep(t *testing.T) {
	base := workDir(t)
	live := filepath.Join(base, "w")
	w := newWorld(t, live, 150, 1)
	for _, name := range []string{"C", "D"} {
		w.grow(t, 64<<10, uint64(len(name)))
		mutateTree(t, w.project, uint64(len(w.ids)+10))
		w.save(t, name)
	}
	tpl := filepath.Join(base, "tpl")
	copyTree(t, live, tpl)
	names := map[string]string{} // id -> state name
	for name, id := range w.ids {
		names[id] = name
	}
	store := filepath.Join(w.project, ".agent/rewind")
	var files []string
	for _, dir := range []string{"checkpoints", "layers"} {
		filepath.WalkDir(filepath.Join(store, dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(store, p)
				files = append(files, rel)
			}
			return nil
		})
	}
	sort.Strings(files)
	probe := filepath.Join(base, "probe")
	// restores reports whether checkpoint id of the world at src restores
	// whole into an emptied copy of its project.
	restores := func(src, id string) error {
		copyTree(t, src, probe)
		p := filepath.Join(probe, "p")
		des, _ := os.ReadDir(p)
		for _, de := range des {
			if de.Name() != ".agent" {
				os.RemoveAll(filepath.Join(p, de.Name()))
			}
		}
		r := run(t, proc{name: "rewind", args: []string{"restore", id, "--yes", "-C", p}, env: w.env})
		if r.code != 0 {
			return fmt.Errorf("exit %d: %s", r.code, firstLineOf(strings.TrimSpace(r.stderr)))
		}
		if name, ok := names[id]; ok {
			if got := treeDigest(t, p); got.sum() != w.sums[name] {
				return fmt.Errorf("restored a different tree: %s", w.digests[name].diff(got))
			}
		}
		return nil
	}
	runs, faults, failures := 0, 0, 0
	for i, f := range files {
		for k, d := range storeDamages {
			if !long && (i%3 != 0 || k != i/3%len(storeDamages)) {
				continue // a third of the files, one way each, here; all, every way, in the long run
			}
			runs++
			faults++
			copyTree(t, tpl, live)
			d.damage(filepath.Join(store, f))
			damaged := filepath.Join(base, "damaged")
			copyTree(t, live, damaged)
			var errs []string
			fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

			flagged := map[string]string{}
			r := run(t, proc{name: "rewind", args: []string{"validate", "--json", "-C", w.project}, env: w.env})
			for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				var p struct{ Type, What, Issue string }
				if json.Unmarshal([]byte(l), &p) == nil && p.Type == "problem" {
					flagged[p.What] = p.Issue
				}
			}
			before := map[string]bool{}
			for id := range names {
				err := restores(damaged, id)
				before[id] = err == nil
				switch issue, bad := flagged[id]; {
				case bad && err == nil:
					fail("validate flags %s (%s), yet it restores", names[id], firstLineOf(issue))
				case !bad && err != nil:
					fail("validate calls %s healthy, yet it does not restore: %v", names[id], err)
				}
			}
			if r := run(t, proc{name: "rewind", args: []string{"save", "after the damage", "-C", w.project}, env: w.env}); r.code != 0 {
				fail("save after the damage: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
			} else if ids := checkpoints(t, w.project, w.env); len(ids) > 0 {
				if err := restores(live, ids[0]); err != nil {
					fail("the checkpoint saved after the damage does not restore: %v", err)
				}
			}
			copyTree(t, damaged, live)
			if r := run(t, proc{name: "rewind", args: []string{"gc", "--keep", "1", "-C", w.project}, env: w.env}); r.code != 0 {
				fail("gc --keep 1: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
			}
			for _, id := range checkpoints(t, w.project, w.env) {
				if before[id] {
					if err := restores(live, id); err != nil {
						fail("%s restored before gc, not after: %v", names[id], err)
					}
				}
			}
			if len(errs) > 0 {
				failures++
				t.Errorf("%s %s: %s", f, d.name, strings.Join(errs, "\n\t"))
			}
		}
	}
	figures(t, "damage-sweep", runs, faults, failures)
}
