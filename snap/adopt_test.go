package snap

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestCreateFromArchive: a tree restored from a full snapshot takes that
// archive as its snapshot, with the manifest Create would write (same tree
// hash and content hashes), and restores from it; a tree that is not the
// archive's is refused with nothing written.
func TestCreateFromArchive(t *testing.T) {
	gitEnv(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(5))
	src, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, src, 400)
	os.RemoveAll(filepath.Join(src, "node_modules"))
	res, want := layerSave(t, src, snaps, 0, 0)
	archive := res.Manifest.Header.Archive

	dir := t.TempDir()
	x, err := IndexArchive(ctx, archive, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, dir, archive, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	tree, err := Walk(ctx, dir, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "adopted.tar.gz")
	got, err := CreateFromArchive(ctx, tree, x, CreateOptions{Out: out})
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
	if _, err := CreateFromArchive(ctx, tree, x, CreateOptions{Out: out2}); !errors.Is(err, ErrNotAdoptable) {
		t.Fatalf("a tree with a file more: %v, want ErrNotAdoptable", err)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Fatal("written though refused")
	}
}
