package snap

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// createWalked snapshots the tree at root as a Walk of it without extra
// ignore patterns finds it, held whole: Create with the tree walked first
// (CreateOptions.Tree). The tests take it as the plain snapshot the others
// are checked against.
func createWalked(ctx context.Context, root string, opts CreateOptions) (*Result, error) {
	var walk WalkOptions
	if opts.Parent != nil {
		walk.Entries = opts.Parent.Header.entries()
	}
	tree, err := Walk(ctx, root, walk)
	if err != nil {
		return nil, err
	}
	opts.Tree = tree
	return Create(ctx, root, opts)
}

// TestCreateRefuses: the options that make no sense together are refused,
// with nothing written.
func TestCreateRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, out := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	first := filepath.Join(out, "0.tar.gz")
	res, err := createWalked(ctx, dir, CreateOptions{Out: first})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteManifestFile(filepath.Join(out, "0.m"), res.Manifest, nil); err != nil {
		t.Fatal(err)
	}
	whole, err := ReadManifest(filepath.Join(out, "0.m"))
	if err != nil {
		t.Fatal(err)
	}
	opened, err := OpenManifest(filepath.Join(out, "0.m"))
	if err != nil {
		t.Fatal(err)
	}
	tree := func() *Tree {
		tr, err := Walk(ctx, dir, WalkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	to := filepath.Join(out, "1.tar.gz")
	for name, opts := range map[string]CreateOptions{
		"adopt without tree":      {Out: to, Adopt: &ArchiveIndex{}},
		"tree and manifest":       {Out: to, Tree: tree(), ManifestTo: filepath.Join(out, "1.m")},
		"tree and walk":           {Out: to, Tree: tree(), Walk: WalkOptions{Ignore: []string{"x"}}},
		"layer and manifest":      {Out: to, Parent: opened, Layer: true, ManifestTo: filepath.Join(out, "1.m")},
		"parent read whole, full": {Out: to, Parent: whole},
	} {
		if _, err := Create(ctx, dir, opts); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, err := os.Stat(to); err == nil {
			t.Fatalf("%s: wrote %s", name, to)
		}
	}
}
