package store

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/rewind/store/gc"
	"rewind.dev/rewind/store/verify"
)

// batchStore is a store of n checkpoints of small edits, each with a
// transcript grown since the one before (links over links), every fifth
// tree unchanged; it returns the checkpoints, oldest first, and the
// transcript bytes each holds.
func batchStore(t *testing.T, n int) (*Store, []*Checkpoint, map[string][]byte) {
	t.Helper()
	s := project(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl")
	data := fixtureBytes(t)
	var cps []*Checkpoint
	holds := map[string][]byte{}
	end := 0
	for i := 0; i < n; i++ {
		if i%5 != 4 {
			write(t, s.Project, fmt.Sprintf("d%d/f%d.txt", i%3, i%7), strings.Repeat(fmt.Sprint(i), 50))
		}
		if next := bytes.IndexByte(data[min(end+200, len(data)-1):], '\n'); next >= 0 && end < len(data) {
			end = min(end+200, len(data)-1) + next + 1
		}
		os.WriteFile(tp, data[:end], 0o644)
		c := save(t, s, SaveOptions{TranscriptPath: tp})
		cps = append(cps, c)
		holds[c.ID] = data[:end]
	}
	return s, cps, holds
}

// checkSurvivors: the store validates, and every checkpoint left has its
// tree (tree hash) and transcript bytes.
func checkSurvivors(t *testing.T, s *Store, cps []*Checkpoint, holds map[string][]byte) {
	t.Helper()
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("validate: %v %v", probs, err)
	}
	for _, c := range cps {
		now, err := s.Load(c.ID)
		if err != nil {
			continue // deleted
		}
		m, err := verify.Snapshot(now)
		if err != nil || m.Header.TreeHash != c.Snapshot.TreeHash {
			t.Fatalf("%s: snapshot %v", c.ID, err)
		}
		if got := inflate(t, s, now); !bytes.Equal(got, holds[c.ID]) {
			t.Fatalf("%s reconstructs %d transcript bytes, want %d", c.ID, len(got), len(holds[c.ID]))
		}
	}
}

// TestGCRebasesEachSurvivorOnce: gc deleting most of a store rewrites each
// survivor's manifest and metadata at most once however many of its
// ancestors go, syncs checkpoints/ once, and leaves every survivor whole.
func TestGCRebasesEachSurvivorOnce(t *testing.T) {
	s, cps, holds := batchStore(t, 30)
	var mu sync.Mutex
	renames := map[string]int{}
	syncs := 0
	durable.FaultAt = func(op, path string) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case op == "rename":
			renames[path]++
		case op == "syncdir" && path == s.checkpointsDir():
			syncs++
		}
		return nil
	}
	res, err := s.GC(ctx, GCOptions{Keep: 4})
	durable.FaultAt = nil
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 26 {
		t.Fatalf("removed %d, want 26", len(res.Removed))
	}
	for p, n := range renames {
		if n > 1 {
			t.Errorf("%s rewritten %d times", p, n)
		}
	}
	if syncs != 1 {
		t.Errorf("checkpoints/ synced %d times, want once", syncs)
	}
	checkSurvivors(t, s, cps, holds)
}

// TestGCBudgetDeletesInRoundsAndCatchesUp: under a time budget (retention
// at a hook) gc deletes a round at a time, at least one per run; between
// runs every checkpoint left is whole, and later runs catch up.
func TestGCBudgetDeletesInRoundsAndCatchesUp(t *testing.T) {
	t.Parallel()
	s, cps, holds := batchStore(t, 24)
	for run := 1; ; run++ {
		res, err := s.GC(ctx, GCOptions{Keep: 3, Budget: time.Nanosecond, Round: 5})
		if err != nil {
			t.Fatal(err)
		}
		checkSurvivors(t, s, cps, holds)
		ids, _ := s.IDs()
		if !res.Partial {
			if len(ids) != 3 || run != 5 {
				t.Fatalf("after %d runs %d checkpoints left, want 3 after 5 runs of at most 5", run, len(ids))
			}
			break
		}
		if len(res.Removed) != 5 || len(ids) != 24-5*run {
			t.Fatalf("run %d removed %v, %d left: want a round of 5", run, res.Removed, len(ids))
		}
	}
}

// TestGCRoundsOpenManifestsAgain: gc in rounds (a budget that fits them
// all, the store read whole: its index dropped, as a killed gc leaves it)
// rewrites in a later round a survivor over one an earlier round rewrote
// (a pinned checkpoint whose parent went): what it opened to plan is
// opened again, not read from the chain an earlier round deleted.
func TestGCRoundsOpenManifestsAgain(t *testing.T) {
	t.Parallel()
	s := project(t)
	big := make([]byte, 64<<10)
	rand.New(rand.NewSource(2)).Read(big) // (a base the small layers do not outgrow)
	write(t, s.Project, "big.bin", string(big))
	var cps []*Checkpoint
	for i := range 5 {
		write(t, s.Project, "f.txt", strings.Repeat("x", i+1))
		cps = append(cps, save(t, s, SaveOptions{}))
	}
	if cps[4].Snapshot.Depth != 4 {
		t.Fatalf("the chain is not one of 4 layers: %+v", cps[4].Snapshot)
	}
	if _, err := s.Pin(ctx, cps[1], PinOptions{Label: "kept"}); err != nil {
		t.Fatal(err)
	}
	if err := s.dropIndex(); err != nil {
		t.Fatal(err)
	}
	// Round 1 deletes the first (the pinned one is rewritten in full),
	// round 2 the third (the fourth is rewritten over the pinned one).
	res, err := s.GC(ctx, GCOptions{Keep: 2, Budget: time.Hour, Round: 1})
	if err != nil || res.Partial || len(res.Removed) != 2 {
		t.Fatalf("gc: %+v, %v", res, err)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("validate: %+v %v", probs, err)
	}
}

// TestGCGoesOnPastACheckpointItMayNotRemove: a checkpoint whose removal
// meets a permission error is kept, with what it builds on, and named with
// what to do; gc deletes the rest as the policy says, and every survivor
// is whole — gc run by hand and retention at a hook (the index) alike.
func TestGCGoesOnPastACheckpointItMayNotRemove(t *testing.T) {
	for _, hook := range []bool{false, true} {
		t.Run(fmt.Sprintf("hook=%v", hook), func(t *testing.T) {
			s, cps, holds := batchStore(t, 10)
			stuck := cps[5]
			durable.FaultAt = func(op, path string) error {
				if op == "rename" && path == stuck.Dir {
					return syscall.EACCES
				}
				return nil
			}
			defer func() { durable.FaultAt = nil }()
			o := GCOptions{Keep: 2}
			if hook {
				o.Budget = time.Hour
				if err := gc.CheckIndex(ctx, s.forGC()); err != nil {
					t.Fatalf("no index to plan from: %v", err)
				}
			}
			res, err := s.GC(ctx, o)
			if err != nil {
				t.Fatalf("gc: %v", err)
			}
			durable.FaultAt = nil
			if len(res.Unremovable) != 1 || res.Unremovable[0].ID != stuck.ID ||
				!strings.Contains(res.Unremovable[0].Error, "permission denied") || !strings.Contains(res.Unremovable[0].Fix, stuck.Dir) {
				t.Errorf("unremovable: %+v; want %s, with its error and a fix", res.Unremovable, stuck.ID)
			}
			var want []string // 0-3 and 6-7; 4 stays, for 5 builds on it
			for _, i := range []int{0, 1, 2, 3, 6, 7} {
				want = append(want, cps[i].ID)
			}
			got := slices.Clone(res.Removed)
			slices.SortFunc(got, CompareIDs)
			if !slices.Equal(got, want) {
				t.Errorf("removed %v, want %v", got, want)
			}
			if ids := mustIDs(t, s); !slices.Equal(ids, []string{cps[4].ID, stuck.ID, cps[8].ID, cps[9].ID}) {
				t.Errorf("left %v", ids)
			}
			checkSurvivors(t, s, cps, holds)
		})
	}
}

func mustIDs(t *testing.T, s *Store) []string {
	t.Helper()
	ids, err := s.IDs()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
