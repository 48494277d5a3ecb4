package snap

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFolderReplacedBySymlinkToSibling: a folder replaced by a symlink to
// its sibling comes back as the folder; nothing is looked up, or written,
// through the symlink (the sibling's files are not "in the way").
func TestFolderReplacedBySymlinkToSibling(t *testing.T) {
	t.Parallel()
	testFolderReplacedBySymlinkToSibling(t, 0)
}

// testFolderReplacedBySymlinkToSibling is
// TestFolderReplacedBySymlinkToSibling, with the restore's plan written out
// spill entries a block (0: as in production; see
// TestRestoresWithThePlanSpilled).
func testFolderReplacedBySymlinkToSibling(t *testing.T, spill int) {
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a/x.txt": "a's x", "a/only-a": "1", "b/x.txt": "b's x", "b/only-b": "2"})
	snaps := t.TempDir()
	_, m := layerSave(t, dir, snaps, 0, 0)
	want := state(t, dir)
	os.RemoveAll(filepath.Join(dir, "a"))
	os.Symlink("b", filepath.Join(dir, "a"))
	for _, opts := range []RestoreOptions{{Manifest: m, spillAt: spill}, {spillAt: spill}} {
		if _, err := Restore(context.Background(), dir, filepath.Join(snaps, "0", "snapshot.tar.gz"), opts); err != nil {
			t.Fatal(err)
		}
		if d := diffStates(want, state(t, dir)); d != "" {
			t.Fatalf("not restored:\n%s", d)
		}
		os.RemoveAll(filepath.Join(dir, "a"))
		os.Symlink("b", filepath.Join(dir, "a"))
	}
}
