package store

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// reachByTrying is what inReach says, found the long way: every run of at
// most n undo-restores and redos is made, on copies of h's entries, by the
// rules undo-restore and redo follow (undoTarget, redoTarget), and the
// backups of h's entries they revert are collected.
func reachByTrying(h History, n int) map[string]bool {
	out := map[string]bool{}
	var try func(es []HistoryEntry, left int)
	try = func(es []HistoryEntry, left int) {
		if left == 0 {
			return
		}
		for _, kind := range []RestoreKind{KindUndoRestore, KindRedo} {
			c := History{Entries: es}
			i := c.undoTarget()
			if kind == KindRedo {
				i = c.redoTarget()
			}
			if i < 0 {
				continue
			}
			if b := es[i].BackupCheckpoint; !strings.HasPrefix(b, "new-") {
				out[b] = true
			}
			next := slices.Clone(es)
			id := fmt.Sprintf("new-%d", len(next))
			next[i].UndoneBy = id
			next = append(next, HistoryEntry{ID: id, Kind: kind, BackupCheckpoint: id, UndoOf: es[i].ID})
			try(next, left-1)
		}
	}
	try(h.Entries, n)
	return out
}

// randomHistory is the history of n random restores (of random kinds),
// undo-restores and redos, each made by the rules they follow.
func randomHistory(rng *rand.Rand, n int) History {
	var h History
	for i := range n {
		id := fmt.Sprintf("b%03d", i)
		kind := []RestoreKind{KindRestore, KindBack, KindRevert, KindUndo, KindUndoRestore, KindUndoRestore, KindRedo, KindRedo}[rng.Intn(8)]
		target := -1
		switch kind {
		case KindUndoRestore:
			target = h.undoTarget()
		case KindRedo:
			target = h.redoTarget()
		default:
			h.Entries = append(h.Entries, HistoryEntry{ID: id, Kind: kind, BackupCheckpoint: id})
			continue
		}
		if target < 0 {
			continue
		}
		h.Entries[target].UndoneBy = id
		h.Entries = append(h.Entries, HistoryEntry{ID: id, Kind: kind, BackupCheckpoint: id, UndoOf: h.Entries[target].ID})
	}
	return h
}

// TestInReachIsWhatUndoAndRedoReach: the backups gc keeps for undo-restore
// and redo are exactly those some run of at most n of them, in any order,
// restores from — in random histories, and in the ones the rule is
// subtle about.
func TestInReachIsWhatUndoAndRedoReach(t *testing.T) {
	t.Parallel()
	entry := func(id string, kind RestoreKind, undoneBy string) HistoryEntry {
		return HistoryEntry{ID: id, Kind: kind, BackupCheckpoint: id, UndoneBy: undoneBy}
	}
	cases := map[string]History{
		// An undo-restore, then a restore: no redo now, but once the
		// restore is undone, two redos reach the first undo-restore.
		"behind a restore": {Entries: []HistoryEntry{
			entry("r1", KindRestore, "u1"), entry("u1", KindUndoRestore, ""), entry("r2", KindRestore, ""),
		}},
		// Eleven restores undone in turn: the next ten undo-restores and
		// the next ten redos.
		"after ten undo-restores": func() History {
			var h History
			for i := range 20 {
				h.Entries = append(h.Entries, entry(fmt.Sprintf("r%02d", i), KindRestore, ""))
			}
			for i := 19; i >= 10; i-- {
				id := fmt.Sprintf("u%02d", i)
				h.Entries[i].UndoneBy = id
				h.Entries = append(h.Entries, entry(id, KindUndoRestore, ""))
			}
			return h
		}(),
	}
	rng := rand.New(rand.NewSource(1))
	for i := range 200 {
		cases[fmt.Sprint("random ", i)] = randomHistory(rng, 1+rng.Intn(40))
	}
	for name, h := range cases {
		for _, n := range []int{0, 1, 2, 3, 5, 8} {
			got, want := h.inReach(n), reachByTrying(h, n)
			if !mapsEqual(got, want) {
				var b strings.Builder
				for _, e := range h.Entries {
					fmt.Fprintf(&b, "\n  %s %s undone by %q", e.ID, e.Kind, e.UndoneBy)
				}
				t.Fatalf("%s, n=%d: inReach %v, runs of undo-restores and redos reach %v; history:%s", name, n, keys(got), keys(want), b.String())
			}
		}
	}
	ten := cases["after ten undo-restores"]
	if got := ten.inReach(UndoReach); len(got) != 20 {
		t.Errorf("after ten undo-restores, %d backups in reach, want the next ten of each: %v", len(got), keys(got))
	}
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
