//go:build unix

package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gcKeep is what the killed gc keeps of the gcCheckpoints it is given.
const gcKeep = 100

// TestGCCrashAtAnyInstant kills 'rewind gc --keep 100' of a store of
// gcCheckpoints checkpoints (layers, transcript links, no-op checkpoints,
// as genstore makes them through the store's own Save) at random fractions
// of its measured duration. After every kill: validate finds no problem
// (every manifest chain reads, its tree hash is the metadata's, every
// archive and transcript link verifies); every checkpoint still listed has
// the tree hash it had, and a sample of them — the oldest that gc must
// keep, whose chain it re-bases, and some it may or may not have deleted —
// restores byte for byte as it did before gc; the newest gcKeep are all
// there; the next gc finishes, validate finds nothing after it either, and
// after the next save nothing temporary, staged or orphaned is left.
func TestGCCrashAtAnyInstant(t *testing.T) {
	crashSweep(t, "gc", func(project string, env []string) proc {
		return proc{name: "rewind", args: []string{"gc", "--keep", fmt.Sprint(gcKeep), "-C", project}, env: env}
	})
}

// TestRetentionCrashAtAnyInstant is TestGCCrashAtAnyInstant for retention
// at a hook (max_checkpoints gcKeep, a budget for every round), which plans
// from the store's index: killed at any instant it leaves the same, and the
// next hook — from the index, or reading the store when the kill left none
// — finishes without harm.
func TestRetentionCrashAtAnyInstant(t *testing.T) {
	crashSweep(t, "retention at a hook", func(project string, env []string) proc {
		cfg := fmt.Sprintf(`{"version":1,"retention":{"max_checkpoints":%d}}`+"\n", gcKeep)
		if err := os.WriteFile(filepath.Join(project, ".agent", "rewind", "config.json"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		req := fmt.Sprintf(`{"version":1,"event":"SessionStart","agent":"claude","project_dir":%q,"checkpoint":"none","retention":true,"retention_budget_ms":600000}`+"\n", project)
		return proc{name: "rewind", args: []string{"hook"}, env: env, stdin: []byte(req)}
	})
}

// crashSweep kills the command cmd makes (given the project and the
// environment, before the store is copied as the template) at random
// instants; see TestGCCrashAtAnyInstant.
func crashSweep(t *testing.T, what string, cmd func(project string, env []string) proc) {
	base := workDir(t)
	live := filepath.Join(base, "w")
	project := filepath.Join(live, "p")
	env := []string{"HOME=" + filepath.Join(live, "home"), "REWIND_HOME=" + filepath.Join(live, "home", ".rewind")}
	os.MkdirAll(filepath.Join(live, "home"), 0o755)
	start := time.Now()
	// (Not run: its deadline is for one command, not for building a store.)
	gen := proc{name: "genstore", args: []string{"-dir", project, "-n", fmt.Sprint(gcCheckpoints), "-files", "60"}, env: env}.command(context.Background())
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("genstore: %v: %s", err, out)
	}
	t.Logf("%d checkpoints made in %v", gcCheckpoints, time.Since(start).Round(time.Millisecond))
	w := &world{root: live, project: project, env: env}

	before := map[string]string{} // id -> tree hash
	var ids []string              // newest first
	for _, l := range listCheckpoints(t, project, env) {
		before[l.Checkpoint.ID] = l.Checkpoint.Snapshot.TreeHash
		ids = append(ids, l.Checkpoint.ID)
	}
	if len(ids) != gcCheckpoints {
		t.Fatalf("the template holds %d checkpoints, want %d", len(ids), gcCheckpoints)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	sample := []string{ids[0], ids[gcKeep-1], ids[rng.IntN(gcKeep)]}
	for range 4 { // ones gc deletes, unless killed first
		sample = append(sample, ids[gcKeep+rng.IntN(len(ids)-gcKeep)])
	}
	want := map[string]string{}
	for _, id := range sample {
		d, err := restoredDigest(t, w, id)
		if err != nil {
			t.Fatalf("before gc: %v", err)
		}
		want[id] = d.sum()
	}
	gc := cmd(project, env)
	tpl := filepath.Join(base, "tpl")
	copyTree(t, live, tpl)

	var durs []time.Duration
	for range 3 {
		copyTree(t, tpl, live)
		durs = append(durs, mustRun(t, gc).dur)
	}
	d := slices.Min(durs)
	t.Logf("%s deleting %d checkpoints takes %v", what, gcCheckpoints-gcKeep, d)

	kills := gcKills
	if n, err := strconv.Atoi(os.Getenv("REWIND_RELIABILITY_KILLS")); err == nil && n > 0 {
		kills = n
	}
	killed, failures := 0, 0
	for i := range kills {
		copyTree(t, tpl, live)
		at := time.Duration(rng.Float64() * 1.05 * float64(d))
		r := runKillAfter(t, gc, at)
		if r.killed {
			killed++
		}
		tag := fmt.Sprintf("kill %d at %v of %v (killed=%v exit=%d)", i, at, d, r.killed, r.code)
		var errs []string
		fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
		probs, _ := validate(t, project, env)
		for _, p := range probs {
			fail("validate: %s", p)
		}
		now := map[string]bool{}
		for _, l := range listCheckpoints(t, project, env) {
			id := l.Checkpoint.ID
			now[id] = true
			if h, ok := before[id]; !ok {
				fail("checkpoint %s appeared", id)
			} else if h != l.Checkpoint.Snapshot.TreeHash {
				fail("checkpoint %s's tree hash is %s, was %s", id, l.Checkpoint.Snapshot.TreeHash, h)
			}
		}
		for _, id := range ids[:gcKeep] {
			if !now[id] {
				fail("checkpoint %s, among the newest %d, is gone", id, gcKeep)
			}
		}
		for _, id := range sample {
			if !now[id] {
				continue
			}
			if got, err := restoredDigest(t, w, id); err != nil {
				fail("checkpoint %s no longer restores: %v", id, err)
			} else if got.sum() != want[id] {
				fail("checkpoint %s restores another tree than before gc", id)
			}
		}
		if r := run(t, gc); r.code != 0 {
			fail("the next run failed (exit %d): %s", r.code, strings.TrimSpace(r.stderr))
		}
		if n := len(checkpoints(t, project, env)); n != gcKeep {
			fail("after the next run %d checkpoints are left, want %d", n, gcKeep)
		}
		probs, _ = validate(t, project, env)
		for _, p := range probs {
			fail("validate after the next run: %s", p)
		}
		if r := run(t, proc{name: "rewind", args: []string{"save", "after", "-C", project}, env: env}); r.code != 0 {
			fail("the next save failed (exit %d): %s", r.code, strings.TrimSpace(r.stderr))
		}
		for _, l := range append(leftovers(live), orphanLayers(t, w)...) {
			p, _ := filepath.Rel(live, l)
			fail("left behind after the next run: %s", p)
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("%s: %s", tag, strings.Join(errs, "\n\t"))
			if failures > 5 {
				t.Fatalf("too many failures; stopping")
			}
		}
	}
	figures(t, fmt.Sprintf("crash/%s of %d checkpoints", what, gcCheckpoints), kills, killed, failures)
}
