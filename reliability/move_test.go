//go:build unix

package reliability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStoreMoveAtAnyInstant kills 'rewind store move' at random instants, both ways, with the
// project and Rewind's home on one file system (a rename) and on two (a copy: the project on
// tmpfs, the home on the disk, where /dev/shm exists). After every kill the project has one
// whole store — every checkpoint listed, validate clean — and running the move again finishes
// it: the store in the mode asked, nothing of the move left behind, the newest checkpoint
// restoring its tree.
func TestStoreMoveAtAnyInstant(t *testing.T) {
	for _, c := range []struct {
		name     string
		from, to string
		across   bool
	}{
		{"to global", "project", "global", false},
		{"to project", "global", "project", false},
		{"to global, across file systems", "project", "global", true},
		{"to project, across file systems", "global", "project", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := workDir(t)
			homeBase := base
			if c.across {
				homeBase = t.TempDir()
			}
			project, home := filepath.Join(base, "p"), filepath.Join(homeBase, "home")
			tplProject, tplHome := filepath.Join(base, "tpl-p"), filepath.Join(homeBase, "tpl-home")
			env := []string{"HOME=" + home, "REWIND_HOME=" + filepath.Join(home, ".rewind")}
			rw := func(args ...string) result {
				return run(t, proc{name: "rewind", args: append(args, "-C", project), env: env})
			}
			genTree(t, project, crashFiles, 7)
			os.MkdirAll(home, 0o700)
			mustRun(t, proc{name: "rewind", args: []string{"init", "--mode", c.from, "-C", project}, env: env})
			mustRun(t, proc{name: "rewind", args: []string{"save", "A", "-C", project}, env: env})
			mutateTree(t, project, 8)
			mustRun(t, proc{name: "rewind", args: []string{"save", "B", "-C", project}, env: env})
			wantB := withoutStore(treeDigest(t, project))
			ids := checkpoints(t, project, env)
			copyTree(t, project, tplProject)
			copyTree(t, home, tplHome)
			reset := func() {
				copyTree(t, tplProject, project)
				copyTree(t, tplHome, home)
			}
			move := proc{name: "rewind", args: []string{"store", "move", c.to, "-C", project}, env: env}
			var durs []time.Duration
			for range 3 {
				reset()
				durs = append(durs, mustRun(t, move).dur)
			}
			d := slices.Min(durs)
			t.Logf("the move takes %v", d)

			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
			killed, failures := 0, 0
			for i := range moveKills {
				reset()
				at := time.Duration(rng.Float64() * 1.05 * float64(d))
				r := runKillAfter(t, move, at)
				if r.killed {
					killed++
				}
				var errs []string
				fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
				// One whole store, whichever mode it is in now.
				if r := rw("store", "--json"); r.code != 0 {
					fail("no store after the kill: %s", strings.TrimSpace(r.stderr))
				} else if got := checkpoints(t, project, env); !slices.Equal(got, ids) {
					fail("checkpoints %v after the kill, want %v", got, ids)
				} else if problems, _ := validate(t, project, env); len(problems) > 0 {
					fail("validate after the kill: %v", problems)
				}
				// The move again finishes it.
				if r := rw("store", "move", c.to); r.code != 0 {
					fail("the move again: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
				} else {
					var st struct{ Mode, Store string }
					json.Unmarshal([]byte(rw("store", "--json").stdout), &st)
					if st.Mode != c.to {
						fail("the store is in %s mode after the move again", st.Mode)
					}
					if got := checkpoints(t, project, env); !slices.Equal(got, ids) {
						fail("checkpoints %v after the move again, want %v", got, ids)
					}
					for _, left := range movedLeftovers(project, home) {
						fail("%s left behind (the move again said %q %q)", left, r.stdout, r.stderr)
					}
					if i%sampleEvery == 0 {
						if r := rw("restore", ids[0], "--yes"); r.code != 0 {
							fail("restore of B: %s", strings.TrimSpace(r.stderr))
						} else if got := treeDigest(t, project); withoutStore(got).sum() != wantB.sum() {
							fail("B restores another tree: %s", wantB.diff(got))
						}
					}
				}
				if len(errs) > 0 {
					failures++
					t.Errorf("kill %d at %v of %v (killed=%v exit=%d): %s", i, at, d, r.killed, r.code, strings.Join(errs, "\n\t"))
					if failures > 5 {
						t.Fatal("too many failures; stopping")
					}
				}
			}
			figures(t, "store move "+c.name, moveKills, killed, failures)
		})
	}
}

// movedLeftovers lists what a move makes on its way that a finished move leaves none of.
func movedLeftovers(project, home string) []string {
	var out []string
	for _, p := range []string{filepath.Join(project, ".agent", "rewind.partial-*"), filepath.Join(project, ".agent", "rewind.moved-*")} {
		m, _ := filepath.Glob(p)
		out = append(out, m...)
	}
	stores, _ := filepath.Glob(filepath.Join(home, ".rewind", "storage", "*"))
	for _, s := range stores {
		if strings.Contains(s, ".partial-") || strings.Contains(s, ".moved-") {
			out = append(out, s)
		}
	}
	return out
}

// withoutStore is d without the store's folder .agent (there in project mode only).
func withoutStore(d digest) digest {
	delete(d, ".agent")
	return d
}
