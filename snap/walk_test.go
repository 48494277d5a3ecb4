//go:build unix

package snap

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestWalkInOrderAsItGoes: a walk told the tree's size (WalkOptions.Entries)
// puts the folders in walk order while it reads them; told too little, too
// much or nothing, it finds the same tree as one that orders them after.
func TestWalkInOrderAsItGoes(t *testing.T) {
	t.Parallel()
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

// TestWalkEachHoldsAWindow hands a slow fn a tree of many folders with a
// window of a few entries: fn gets what Walk lists, in its order, and the
// walk never reads more than the window and a folder ahead of it; an error
// from fn ends the walk, with folders waiting to be read, and is returned.
func TestWalkEachHoldsAWindow(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	largest := 0
	for i := 0; i < 40; i++ {
		for j := 0; j < 3; j++ {
			d := filepath.Join(dir, fmt.Sprintf("d%02d", i), fmt.Sprintf("e%d", j))
			os.MkdirAll(d, 0o755)
			for k := 0; k < 1+(i*7+j)%9; k++ {
				os.WriteFile(filepath.Join(d, fmt.Sprint(k)), []byte("x"), 0o644)
			}
			largest = max(largest, 1+(i*7+j)%9)
		}
	}
	want, err := Walk(context.Background(), dir, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const window = 5
	var mu sync.Mutex
	most := 0
	opts := WalkOptions{window: window, readAhead: func(n int) {
		mu.Lock()
		most = max(most, n)
		mu.Unlock()
	}}
	var got []Entry
	tree, err := WalkEach(context.Background(), dir, opts, func(e *Entry) error {
		if len(got)%17 == 0 {
			time.Sleep(time.Millisecond) // (the readers run ahead, up to the window)
		}
		got = append(got, *e)
		return nil
	})
	if err != nil || tree.Entries != nil {
		t.Fatalf("WalkEach: %v (entries listed: %d)", err, len(tree.Entries))
	}
	if !reflect.DeepEqual(got, want.Entries) {
		t.Fatalf("WalkEach handed %d entries, Walk lists %d, or in another order", len(got), len(want.Entries))
	}
	// (the folders let in at once when the window frees, each of a reader)
	if limit := window + 40 + (walkWorkers+1)*largest; most > limit || most == 0 || most > len(want.Entries)/4 {
		t.Fatalf("read %d entries ahead at most, the window lets %d", most, limit)
	}
	t.Logf("read %d entries ahead at most (window %d, tree %d)", most, window, len(want.Entries))
	stop := errors.New("enough")
	n := 0
	_, err = WalkEach(context.Background(), dir, opts, func(e *Entry) error {
		if n++; n == 30 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("fn's error ended the walk with %v", err)
	}
}

// TestTreeIndexFindsWhatAMapFinds looks up every path of a walked tree,
// and names it does not hold, in walk order and shuffled: the restore
// plan's index of the tree finds what a map of it finds.
func TestTreeIndexFindsWhatAMapFinds(t *testing.T) {
	t.Parallel()
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

// TestWalkFolderThatKeepsChanging: a folder made again each time the walk
// opens it (it is gone when opened, a folder when looked at again) does not
// fail the walk: it is taken as gone, as it was when last opened, and the
// rest of the tree as it is.
func TestWalkFolderThatKeepsChanging(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	deeper := filepath.Join(dir, "swap", "inner", "deeper")
	for _, f := range []string{"a.txt", "swap/b.txt", "swap/inner/deeper/f"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opened := 0
	open := func(abs string) (dirFD, []string, error) {
		if abs != deeper {
			return openDir(abs)
		}
		opened++
		os.RemoveAll(deeper)
		fd, names, err := openDir(abs)
		os.MkdirAll(deeper, 0o755)
		return fd, names, err
	}
	tree, err := Walk(context.Background(), dir, WalkOptions{openFolder: open})
	if err != nil {
		t.Fatalf("the walk failed on a folder that keeps changing: %v", err)
	}
	var got []string
	for _, e := range tree.Entries {
		got = append(got, e.Path)
	}
	if want := []string{"a.txt", "swap", "swap/b.txt", "swap/inner"}; !slices.Equal(got, want) {
		t.Fatalf("walked %q, want %q", got, want)
	}
	if opened != maxRetries+1 {
		t.Fatalf("the folder was opened %d times, want %d", opened, maxRetries+1)
	}
}

// TestWalkStartsByItsClock: a walk's start is read from WalkOptions.Now,
// and so is the scan's start a snapshot's manifest keeps, which decides
// which of its files are racy: none, on a clock past the window.
func TestWalkStartsByItsClock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	later := time.Now().Add(2 * racyWindow)
	clock := func() time.Time { return later }
	tree, err := Walk(context.Background(), dir, WalkOptions{Now: clock})
	if err != nil || tree.Started != later.UnixNano() {
		t.Fatalf("walk started %v (%v), want %d", tree, err, later.UnixNano())
	}
	for _, now := range []func() time.Time{nil, clock} {
		res, err := Create(context.Background(), dir, CreateOptions{Walk: WalkOptions{Now: now}, Out: filepath.Join(t.TempDir(), "a.tar.gz")})
		if err != nil {
			t.Fatal(err)
		}
		m := res.Manifest
		if now != nil && m.Header.ScanStarted != later.UnixNano() {
			t.Errorf("manifest's scan started %d, want %d", m.Header.ScanStarted, later.UnixNano())
		}
		i := slices.IndexFunc(tree.Entries, func(e Entry) bool { return e.Path == "a.txt" })
		if racy := m.racy(&tree.Entries[i]); racy != (now == nil) {
			t.Errorf("with a clock %v: a.txt racy %v", now != nil, racy)
		}
	}
	if _, err := Create(context.Background(), dir, CreateOptions{Tree: tree, Walk: WalkOptions{Now: clock}, Out: filepath.Join(t.TempDir(), "a.tar.gz")}); err == nil {
		t.Error("Create took a clock for a walk it does not make (Tree)")
	}
}
