//go:build unix

package snap

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// TestTreeIndexFindsWhatAMapFinds looks up every path of a walked tree,
// and names it does not hold, in walk order and shuffled: the restore
// plan's index of the tree finds what a map of it finds.
func TestTreeIndexFindsWhatAMapFinds(t *testing.T) {
	gitEnv(t)
	rng := rand.New(rand.NewSource(12))
	dir := t.TempDir()
	genTree(t, rng, dir, 300)
	for _, name := range []string{"a!b", "a-b", "a", "a.b", "b/c", "b!"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	tree, err := Walk(context.Background(), dir, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*Entry{}
	var names []string
	for i := range tree.Entries {
		p := tree.Entries[i].Path
		byPath[p] = &tree.Entries[i]
		names = append(names, p, p+"!", p+"/", p+"/zz", p[:len(p)-1])
	}
	x := treeIndex{entries: tree.Entries}
	check := func(order string) {
		for _, n := range names {
			if got, want := x.get(n), byPath[n]; got != want {
				t.Fatalf("%s: get(%q) = %v, want %v", order, n, got, want)
			}
		}
	}
	check("walk order")
	slices.Reverse(names)
	check("backwards")
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	check("shuffled")
	if (&treeIndex{}).get("a") != nil {
		t.Fatal("an empty tree holds a")
	}
}
