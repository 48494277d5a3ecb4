package snap

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"rewind.dev/snap/pathspec"
)

// TestCreateAdoptsTheArchiveItWasRestoredFrom: a tree restored from a full
// snapshot takes that archive as its snapshot (CreateOptions.Adopt), with
// the manifest Create would write (same tree hash and content hashes), and
// restores from it; a tree that is not the archive's is refused with
// nothing written.
func TestCreateAdoptsTheArchiveItWasRestoredFrom(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(5))
	src, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, src, 400)
	os.RemoveAll(filepath.Join(src, "node_modules"))
	res, want := layerSave(t, src, snaps, 0, 0)
	archive := res.Manifest.Header.Archive

	dir := t.TempDir()
	_, x, err := restoreIndexedTest(ctx, dir, archive, RestoreOptions{})
	if err != nil || x == nil {
		t.Fatalf("restore indexed: %v, index %v", err, x != nil)
	}
	tree, err := Walk(ctx, dir, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "adopted.tar.gz")
	got, err := createFromArchive(ctx, tree, x, CreateOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if got.TreeHash != want.Header.TreeHash || got.Files != want.Header.Files || got.Layer {
		t.Fatalf("adopted: tree %s, %d files; want %s, %d files", got.TreeHash, got.Files, want.Header.TreeHash, want.Header.Files)
	}
	mf := filepath.Join(filepath.Dir(out), "manifest")
	if err := WriteManifestFile(mf, got.Manifest, nil); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(mf)
	if err != nil {
		t.Fatal(err)
	}
	if err := NewVerifier().Check(ctx, m); err != nil {
		t.Fatalf("verify: %v", err)
	}
	before := state(t, dir)
	mutate(t, rng, dir)
	if _, err := Restore(ctx, dir, "", RestoreOptions{Manifest: m}); err != nil {
		t.Fatalf("restore through the adopted manifest: %v", err)
	}
	if d := diffStates(before, state(t, dir)); d != "" {
		t.Fatalf("restore through the adopted manifest differs:\n%s", d)
	}

	// A tree that is not the archive's.
	os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("x"), 0o644)
	tree, err = Walk(ctx, dir, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "no.tar.gz")
	if _, err := createFromArchive(ctx, tree, x, CreateOptions{Out: out2}); !errors.Is(err, ErrNotAdoptable) {
		t.Fatalf("a tree with a file more: %v, want ErrNotAdoptable", err)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Fatal("written though refused")
	}
}

// TestRestoreIndexOverATreeHasEveryEntry: restoring with
// RestoreOptions.Index over a tree that holds some of the archive's files
// (same, changed, cut short, missing) and more, the index still has every
// entry with the content hash and place Create recorded — whichever way
// the restore read each file.
func TestRestoreIndexOverATreeHasEveryEntry(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(9))
	src, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, src, 300)
	res, want := layerSave(t, src, snaps, 0, 0)
	archive := res.Manifest.Header.Archive

	dir := t.TempDir()
	if _, err := Restore(ctx, dir, archive, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	mutate(t, rng, dir)
	_, x, err := restoreIndexedTest(ctx, dir, archive, RestoreOptions{})
	if err != nil || x == nil {
		t.Fatalf("restore indexed: %v, index %v", err, x != nil)
	}
	checkIndex(t, x, want)

	// A layer is no snapshot of a whole tree: nothing to adopt.
	os.WriteFile(filepath.Join(src, "more.txt"), []byte("more"), 0o644)
	lres, _ := layerSave(t, src, snaps, 1, 0)
	if !lres.Layer {
		t.Fatal("the second save is no layer")
	}
	if _, x, err := restoreIndexedTest(ctx, t.TempDir(), lres.Manifest.Header.Archive, RestoreOptions{}); err == nil || x != nil {
		t.Fatalf("a layer restored indexed: %v, index %v", err, x != nil)
	}
}

// checkIndex fails t unless x indexes every entry of the manifest want,
// with the content hash and place it records.
func checkIndex(t *testing.T, x *ArchiveIndex, want *Manifest) {
	t.Helper()
	if len(x.entries) != len(want.Entries) {
		t.Fatalf("index holds %d entries, the manifest %d", len(x.entries), len(want.Entries))
	}
	for _, w := range want.Entries {
		g := x.entries[w.Path]
		switch {
		case g == nil:
			t.Errorf("%s: not indexed", w.Path)
		case g.Kind != w.Kind || g.Hash != w.Hash || g.Size != w.Size:
			t.Errorf("%s: indexed %v %d %s, manifest %v %d %s", w.Path, g.Kind, g.Size, g.Hash, w.Kind, w.Size, w.Hash)
		case w.Kind == KindFile && (g.COff != w.COff || g.Skip != w.Skip):
			t.Errorf("%s: indexed at %d+%d, manifest %d+%d", w.Path, g.COff, g.Skip, w.COff, w.Skip)
		}
	}
}

// restoreIndexedTest is Restore with RestoreOptions.Index, its index
// returned beside the result.
func restoreIndexedTest(ctx context.Context, root, archive string, opts RestoreOptions) (*RestoreResult, *ArchiveIndex, error) {
	opts.Index = true
	res, err := Restore(ctx, root, archive, opts)
	var x *ArchiveIndex
	if res != nil {
		x = res.Index
	}
	return res, x, err
}

// TestRestoreIndexRefuses: an index is of an archive read whole, so
// RestoreOptions.Index is refused with a manifest or paths.
func TestRestoreIndexRefuses(t *testing.T) {
	t.Parallel()
	if _, err := Restore(context.Background(), t.TempDir(), "a.tar.gz", RestoreOptions{Index: true, Manifest: &Manifest{}}); err == nil {
		t.Error("an index with a manifest: no error")
	}
	if _, err := Restore(context.Background(), t.TempDir(), "a.tar.gz", RestoreOptions{Index: true, Paths: &pathspec.Pathspec{}}); err == nil {
		t.Error("an index with paths: no error")
	}
}
