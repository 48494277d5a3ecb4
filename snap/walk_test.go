//go:build unix

package snap

import (
	"context"
	"math/rand"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

// TestWalkInOrderAsItGoes: a walk told the tree's size (WalkOptions.Entries)
// puts the folders in walk order while it reads them; told too little, too
// much or nothing, it finds the same tree as one that orders them after.
func TestWalkInOrderAsItGoes(t *testing.T) {
	gitEnv(t)
	rng := rand.New(rand.NewSource(11))
	dir := t.TempDir()
	genTree(t, rng, dir, 400)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	want, err := Walk(context.Background(), dir, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Entries) < 100 || len(want.Special) != 1 {
		t.Fatalf("the tree is not what the test needs: %d entries, special %q", len(want.Entries), want.Special)
	}
	for _, n := range []int{1, len(want.Entries), 1 << 40, -5} {
		got, err := Walk(context.Background(), dir, WalkOptions{Entries: n})
		if err != nil {
			t.Fatal(err)
		}
		got.Started = want.Started
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("told %d entries, the walk found another tree (%d entries, not %d)", n, len(got.Entries), len(want.Entries))
		}
	}
}
