package snap

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestLayerOfWhatDiffersIsTheWholeTreesLayer saves one tree, through random
// edits, touches and unchanged rounds, as two layer chains: one from the
// whole tree walked first (createWalked) over the parent opened, one
// compared with the parent as the walk goes (createOver), holding only what
// differs. Each layer must be the same in every figure, manifest line,
// change and archive member, and every layer of what differs must restore
// its tree. It runs with the whole hashing budget, and with none (the tree
// hash then taken again after the archive), and with chunks that split
// every manifest line.
func TestLayerOfWhatDiffersIsTheWholeTreesLayer(t *testing.T) {
	t.Parallel()
	for _, budget := range []int64{64 << 20, -1} {
		for _, chunk := range []int{1 << 20, 61} {
			t.Run(fmt.Sprintf("budget=%d,chunk=%d", budget, chunk), func(t *testing.T) {
				t.Parallel()
				checkLayerIsTheWholeTreesLayer(t, budget, chunk)
			})
		}
	}
}

func checkLayerIsTheWholeTreesLayer(t *testing.T, budget int64, chunk int) {
	gitEnv(t)
	rng := rand.New(rand.NewSource(5))
	dir := t.TempDir()
	whole, over := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 150)
	save := func(snaps string, i int, sparse bool) (*Result, []Change) {
		out := filepath.Join(snaps, fmt.Sprint(i))
		os.MkdirAll(out, 0o755)
		opts := CreateOptions{Out: filepath.Join(out, "snapshot.tar.gz"), Layer: true, Reuse: true, hashBudget: budget}
		if i > 0 {
			p, err := openChunked(chunk)(filepath.Join(snaps, fmt.Sprint(i-1), "manifest"))
			if err != nil {
				t.Fatal(err)
			}
			opts.Parent = p
		}
		create := createWalked
		if sparse {
			create = func(ctx context.Context, root string, opts CreateOptions) (*Result, error) {
				return createOver(ctx, root, WalkOptions{}, opts)
			}
		}
		res, err := create(context.Background(), dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reused {
			b, _ := os.ReadFile(res.Manifest.File)
			os.WriteFile(filepath.Join(out, "manifest"), b, 0o644)
			return res, nil
		}
		if sparse != res.Manifest.sparse && i > 0 {
			t.Fatalf("layer %d: sparse %v", i, res.Manifest.sparse)
		}
		var changes []Change
		if i > 0 {
			if changes, err = Diff(context.Background(), DiffOptions{From: opts.Parent, To: res.Manifest}); err != nil {
				t.Fatal(err)
			}
		}
		if err := WriteManifestFile(filepath.Join(out, "manifest"), res.Manifest, opts.Parent); err != nil {
			t.Fatal(err)
		}
		return res, changes
	}
	members := func(snaps string, i int) string {
		b, err := exec.Command("tar", "tzf", filepath.Join(snaps, fmt.Sprint(i), "snapshot.tar.gz")).CombinedOutput()
		if err != nil && !os.IsNotExist(err) {
			return err.Error()
		}
		return string(b)
	}
	figures := func(r *Result) Result {
		c := *r
		c.Manifest, c.Archive = nil, ""
		c.CompressedBytes = 0 // (a whiteout's header holds the time it was written)
		return c
	}
	v := NewVerifier()
	for i := 0; i < 10; i++ {
		switch {
		case i == 0:
		case i%3 == 0: // unchanged: reused
		case i%3 == 1:
			mutate(t, rng, dir)
			touchSome(t, rng, dir)
		default:
			touchSome(t, rng, dir) // new times, same content: hashed again, an empty layer
		}
		rw, cw := save(whole, i, false)
		ro, co := save(over, i, true)
		if a, b := figures(rw), figures(ro); !reflect.DeepEqual(a, b) {
			t.Fatalf("layer %d: createOver's result\n%+v\nCreate's\n%+v", i, b, a)
		}
		if !reflect.DeepEqual(cw, co) {
			t.Fatalf("layer %d: createOver's changes\n%v\nCreate's\n%v", i, co, cw)
		}
		a, _ := os.ReadFile(filepath.Join(whole, fmt.Sprint(i), "manifest"))
		b, _ := os.ReadFile(filepath.Join(over, fmt.Sprint(i), "manifest"))
		_, la, _ := strings.Cut(string(a), "\n")
		_, lb, _ := strings.Cut(string(b), "\n")
		if la != lb {
			t.Fatalf("layer %d: createOver's lines\n%s\nCreate's\n%s", i, lb, la)
		}
		if ma, mb := members(whole, i), members(over, i); ma != mb {
			t.Fatalf("layer %d: createOver's archive holds\n%s\nCreate's\n%s", i, mb, ma)
		}
		want, _ := splitIgnored(state(t, dir))
		m, err := openChunked(chunk)(filepath.Join(over, fmt.Sprint(i), "manifest"))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Check(context.Background(), m); err != nil {
			t.Fatalf("verify %d: %v", i, err)
		}
		to := t.TempDir()
		if _, err := Restore(context.Background(), to, "", RestoreOptions{Manifest: m}); err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
		got, _ := splitIgnored(state(t, to))
		if d := diffStates(want, got); d != "" {
			t.Fatalf("restore of layer %d differs:\n%s", i, d)
		}
	}
}

// TestSparseManifestOverAnotherParent refuses to write or compare a sparse
// manifest over any list but the one it was kept against.
func TestSparseManifestOverAnotherParent(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	rng := rand.New(rand.NewSource(2))
	dir, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 40)
	layerSave(t, dir, snaps, 0, 0)
	p, err := OpenManifest(filepath.Join(snaps, "0", "manifest"))
	if err != nil {
		t.Fatal(err)
	}
	mutate(t, rng, dir)
	res, err := createOver(context.Background(), dir, WalkOptions{}, CreateOptions{Out: filepath.Join(snaps, "1.tar.gz"), Parent: p, Layer: true})
	if err != nil || !res.Manifest.sparse {
		t.Fatalf("createOver: %v (sparse %v)", err, res != nil && res.Manifest.sparse)
	}
	other, _ := OpenManifest(filepath.Join(snaps, "0", "manifest"))
	if err := WriteManifestFile(filepath.Join(snaps, "1.manifest"), res.Manifest, other); err == nil {
		t.Fatal("a sparse manifest was written over a parent it was not kept against")
	}
	if _, err := Diff(context.Background(), DiffOptions{From: other, To: res.Manifest}); err == nil {
		t.Fatal("a sparse manifest was compared with a parent it was not kept against")
	}
	p.recall = nil
	if _, err := Diff(context.Background(), DiffOptions{From: p, To: res.Manifest}); err == nil {
		t.Fatal("a sparse manifest was compared once its parent's recall was gone")
	}
}

// TestFullSnapshotAgainstItsParentIsTheWholeTree: a full snapshot judged
// against its parent (rewind-snap create --parent-manifest) is the same
// compared as the walk goes (createOverFull), holding what was touched, as
// from the whole tree walked first (createWalked) over the parent read
// whole, holding the tree — unchanged (no archive), touched (no archive, the
// fresh times laid over the parent's), changed (written whole) — over a
// full parent and over a layer chain, in every figure and manifest line;
// and each restores its tree.
func TestFullSnapshotAgainstItsParentIsTheWholeTree(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(21))
	dir, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 150)
	layerSave(t, dir, snaps, 0, 0)
	for round := 0; round < 9; round++ {
		switch round % 3 {
		case 1:
			touchSome(t, rng, dir)
		case 2:
			mutate(t, rng, dir)
		}
		parent := filepath.Join(snaps, fmt.Sprint(round/3), "manifest")
		rw, ro, byCreate, byOver := createBothWays(t, dir, parent, 0)
		if want := round%3 != 2; rw.Unchanged != want || ro.Unchanged != want || (ro.Archive == "") != want {
			t.Fatalf("round %d: unchanged %v by Create, %v (archive %q) by createOverFull; want %v", round, rw.Unchanged, ro.Unchanged, ro.Archive, want)
		}
		figures := func(r *Result) Result {
			c := *r
			c.Manifest, c.Archive = nil, ""
			return c
		}
		if a, b := figures(rw), figures(ro); !reflect.DeepEqual(a, b) {
			t.Fatalf("round %d: createOverFull's result\n%+v\nCreate's\n%+v", round, b, a)
		}
		if la, lb := manifestLines(t, byCreate), manifestLines(t, byOver); la != lb {
			t.Fatalf("round %d: createOverFull's lines\n%s\nCreate's\n%s", round, lb, la)
		}
		m, err := OpenManifest(byOver)
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Parent != "" || m.Header.TreeHash != rw.TreeHash {
			t.Fatalf("round %d: manifest's parent %q, tree %s; want none, %s", round, m.Header.Parent, m.Header.TreeHash, rw.TreeHash)
		}
		to := t.TempDir()
		if _, err := Restore(ctx, to, "", RestoreOptions{Manifest: m}); err != nil {
			t.Fatalf("round %d: restore: %v", round, err)
		}
		want, _ := splitIgnored(state(t, dir))
		got, _ := splitIgnored(state(t, to))
		if d := diffStates(want, got); d != "" {
			t.Fatalf("round %d: restore differs:\n%s", round, d)
		}
		if round%3 == 2 {
			layerSave(t, dir, snaps, round/3+1, 0) // the next rounds' parent: a layer over this one
		}
	}
}

// TestLayerTooBig: a layer save over a tree that differs from its parent
// in more than layerMost entries writes nothing and says so, and a full
// one judged against the parent is then written whole, as Create writes
// it.
func TestLayerTooBig(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(4))
	dir, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 150)
	layerSave(t, dir, snaps, 0, 0)
	rewriteEveryFile(t, dir)
	parent := filepath.Join(snaps, "0", "manifest")
	for _, most := range []int{1 << 16, 10} {
		opened, err := OpenManifest(parent)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "layer.tar.gz")
		res, err := createOver(ctx, dir, WalkOptions{}, CreateOptions{Out: out, Parent: opened, Layer: true, layerMost: most})
		if _, serr := os.Stat(out); most == 10 && (!errors.Is(err, ErrLayerTooBig) || serr == nil) {
			t.Fatalf("a layer of every file, at most %d entries: %v, archive written %v", most, err, serr == nil)
		}
		if most > 10 && (err != nil || !res.Layer) {
			t.Fatalf("a layer of every file: %v", err)
		}
	}
	rw, ro, byCreate, byOver := createBothWays(t, dir, parent, 10)
	la, lb := manifestLines(t, byCreate), manifestLines(t, byOver)
	if ro.Archive == "" || ro.TreeHash != rw.TreeHash || la != lb {
		t.Fatalf("createOverFull of a tree too changed for a layer: archive %q, tree %s, want %s; lines\n%s\nCreate's\n%s", ro.Archive, ro.TreeHash, rw.TreeHash, lb, la)
	}
	// A tree emptied: what a layer holds of it is the parent's side.
	emptyButIgnored(t, dir)
	opened, err := OpenManifest(parent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := createOver(ctx, dir, WalkOptions{}, CreateOptions{Out: filepath.Join(t.TempDir(), "l.tar.gz"), Parent: opened, Layer: true, layerMost: 10}); !errors.Is(err, ErrLayerTooBig) {
		t.Fatalf("a layer over a tree emptied: %v, want ErrLayerTooBig", err)
	}
}

// createBothWays writes a full snapshot of dir judged against the parent
// manifest, by Create over it read whole and by createOverFull over it
// opened, and the manifest of each (createOverFull's, unless it wrote it).
// createOverFull keeps layerMost entries at most (0: as in production).
func createBothWays(t *testing.T, dir, parent string, layerMost int) (byCreate, byOver *Result, createManifest, overManifest string) {
	t.Helper()
	ctx := context.Background()
	createManifest, overManifest = filepath.Join(t.TempDir(), "m"), filepath.Join(t.TempDir(), "m")
	whole, err := ReadManifest(parent)
	if err != nil {
		t.Fatal(err)
	}
	if byCreate, err = createWalked(ctx, dir, CreateOptions{Out: filepath.Join(filepath.Dir(createManifest), "s.tar.gz"), Parent: whole}); err != nil {
		t.Fatal(err)
	}
	if err := WriteManifestFile(createManifest, byCreate.Manifest, nil); err != nil {
		t.Fatal(err)
	}
	opened, err := OpenManifest(parent)
	if err != nil {
		t.Fatal(err)
	}
	if byOver, err = createOverFull(ctx, dir, WalkOptions{}, CreateOptions{Out: filepath.Join(filepath.Dir(overManifest), "s.tar.gz"), Parent: opened, layerMost: layerMost}, overManifest); err != nil {
		t.Fatal(err)
	}
	if byOver.Archive == "" {
		if err := WriteManifestFile(overManifest, byOver.Manifest, nil); err != nil {
			t.Fatal(err)
		}
	}
	return byCreate, byOver, createManifest, overManifest
}

// manifestLines is a manifest file's entry lines: all but its header.
func manifestLines(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	_, lines, _ := strings.Cut(string(b), "\n")
	return lines
}
