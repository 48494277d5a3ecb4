//go:build unix

package reliability

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// interruptCases are the commands a person may interrupt: those the crash
// test kills, and the long ones that change nothing.
func interruptCases() []crashCase {
	cases := crashCases()
	return append(cases,
		crashCase{name: "validate", before: "C", after: "C", cmd: func(w *world) proc {
			return proc{name: "rewind", args: []string{"validate", "-C", w.project}, env: w.env}
		}},
		crashCase{name: "gc", before: "C", after: "C", cmd: func(w *world) proc {
			return proc{name: "rewind", args: []string{"gc", "--keep", "1", "-C", w.project}, env: w.env}
		}},
		crashCase{name: "snap-create", before: "C", after: "C", cmd: func(w *world) proc {
			return proc{name: "rewind-snap", args: []string{"create", "--root", w.project, "--out", filepath.Join(w.root, "s.tar.gz"),
				"--manifest", filepath.Join(w.root, "s.manifest")}, env: w.env}
		}},
	)
}

// TestInterruptAtAnyInstant sends SIGINT or SIGTERM (as Ctrl-C, or an
// agent's hook timeout, would) to each command at random instants of its
// run: it ends within a second, with exit status 130 (or 0 when it had
// finished), leaves nothing half-made — no temporary or staging file, not
// even before the next run — and every property the crash test checks
// holds.
func TestInterruptAtAnyInstant(t *testing.T) {
	for _, c := range interruptCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := workDir(t)
			live := filepath.Join(base, "w")
			w := newWorld(t, live, crashFiles, crashTranscriptMB)
			if c.setup != nil {
				c.setup(t, w)
				w.tr = w.readTranscript(t)
			}
			tpl := filepath.Join(base, "tpl")
			copyTree(t, live, tpl)
			settings0, _ := os.ReadFile(w.settings)
			var settings1 []byte
			var durs []time.Duration
			for range 3 {
				copyTree(t, tpl, live)
				durs = append(durs, mustRun(t, c.cmd(w)).dur)
				settings1, _ = os.ReadFile(w.settings)
			}
			d := slices.Min(durs)
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
			signaled, failures := 0, 0
			for i := range interruptKills {
				copyTree(t, tpl, live)
				before := checkpoints(t, w.project, w.env)
				sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[i%2]
				at := time.Duration(rng.Float64() * float64(d))
				r := runSignalAfter(t, c.cmd(w), at, sig)
				var errs []string
				if r.signaled {
					signaled++
					if r.afterSignal > time.Second {
						errs = append(errs, fmt.Sprintf("ended %v after %v, not within a second", r.afterSignal, sig))
					}
					// Before the runtime has set up its handler, the signal's
					// default action ends the process (a shell shows 130 or 143).
					if r.code != 130 && r.code != 0 && r.diedOf != sig {
						errs = append(errs, fmt.Sprintf("exit %d after %v (want 130, or 0 when it had finished): %s", r.code, sig, strings.TrimSpace(r.stderr)))
					}
				}
				for _, l := range leftovers(w.root) {
					p, _ := filepath.Rel(w.root, l)
					errs = append(errs, "half-made after the interrupt: "+p)
				}
				errs = append(errs, w.check(t, c, before, settings0, settings1)...)
				if len(errs) > 0 {
					failures++
					t.Errorf("%v at %v of %v (exit %d): %s", sig, at, d, r.code, strings.Join(errs, "\n\t"))
					if failures > 5 {
						t.Fatal("too many failures; stopping")
					}
				}
			}
			figures(t, "interrupt/"+c.name, interruptKills, signaled, failures)
		})
	}
}
