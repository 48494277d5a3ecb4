package snap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreKeepsItsOwnInputs: an archive, a manifest and a layer chain
// kept inside the tree they were taken of are neither deleted nor written
// by a restore from them.
func TestRestoreKeepsItsOwnInputs(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	snaps := filepath.Join(dir, "snaps") // the chain lives in the tree
	layerSave(t, dir, snaps, 0, 0)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A"), 0o644)
	layerSave(t, dir, snaps, 1, 0)
	whole := filepath.Join(dir, "whole.tar.gz")
	create(t, dir, whole) // holds the chain's files too
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed"), 0o644)
	restore := func(name, archive string, manifest string, inputs ...string) {
		t.Helper()
		opts := RestoreOptions{}
		if manifest != "" {
			m, err := ReadManifest(filepath.Join(dir, manifest))
			if err != nil {
				t.Fatal(err)
			}
			opts.Manifest = m
		}
		before := map[string]string{}
		for _, p := range inputs {
			b, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			before[p] = string(b)
		}
		res, err := Restore(context.Background(), dir, archive, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for p, want := range before {
			if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != want {
				t.Errorf("%s: its input %s was deleted or written (%v)", name, p, err)
			}
		}
		if len(res.Inputs) != len(inputs) {
			t.Errorf("%s: kept_inputs %v, want %v", name, res.Inputs, inputs)
		}
	}
	restore("restore --from", whole, "", "whole.tar.gz")
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "A" {
		t.Errorf("a.txt = %q, want the archive's", b)
	}
	restore("restore of layer 1", "", "snaps/1/manifest", "snaps/1/manifest", "snaps/0/manifest", "snaps/1/snapshot.tar.gz", "snaps/0/snapshot.tar.gz")
	restore("restore of layer 0", "", "snaps/0/manifest", "snaps/0/manifest", "snaps/0/snapshot.tar.gz")
}

// TestWhiteoutNamesAreFilesInAFullSnapshot: a full snapshot holding files
// named like whiteouts restores from its archive alone, exactly; a layer is
// known by its mark, not by its names, and refused that way; a layer that
// adds .wh.x while x goes away holds both, and its chain restores exactly.
func TestWhiteoutNamesAreFilesInAFullSnapshot(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	files := map[string]string{".wh.foo": "", "d/.wh..wh..opq": "", "d/.wh.bar": "mine", "x": "x"}
	writeTree(t, dir, files)
	full := filepath.Join(t.TempDir(), "full.tar.gz")
	create(t, dir, full)
	want := state(t, dir)
	os.RemoveAll(filepath.Join(dir, "d"))
	os.WriteFile(filepath.Join(dir, ".wh.foo"), []byte("changed"), 0o644)
	if _, err := Restore(context.Background(), dir, full, RestoreOptions{}); err != nil {
		t.Fatalf("restore of a full snapshot holding .wh. names: %v", err)
	}
	if d := diffStates(want, state(t, dir)); d != "" {
		t.Fatalf("restored tree differs:\n%s", d)
	}

	snaps := t.TempDir()
	layerSave(t, dir, snaps, 0, 0)
	os.Remove(filepath.Join(dir, "x"))
	os.WriteFile(filepath.Join(dir, ".wh.x"), []byte("a file of mine"), 0o644)
	_, m := layerSave(t, dir, snaps, 1, 0)
	want = state(t, dir)
	layer := filepath.Join(snaps, "1", "snapshot.tar.gz")
	before := state(t, dir)
	if _, err := Restore(context.Background(), dir, layer, RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "layer") {
		t.Fatalf("restore --from a layer: %v, want a refusal saying it is a layer", err)
	}
	if d := diffStates(before, state(t, dir)); d != "" {
		t.Fatalf("the refused restore changed the tree:\n%s", d)
	}
	os.Remove(filepath.Join(dir, ".wh.x"))
	os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644)
	if _, err := Restore(context.Background(), dir, "", RestoreOptions{Manifest: m}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, state(t, dir)); d != "" {
		t.Fatalf("restored layer differs:\n%s", d)
	}
	if err := NewVerifier().Check(context.Background(), m); err != nil {
		t.Fatalf("the layer does not verify: %v", err)
	}
}
