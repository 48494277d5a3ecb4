//go:build unix

package snap

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// asUnprivileged runs the calling test again as nobody when the tests run
// as root (for whom every file is readable) and reports whether the caller
// should go on: true in that child, or when the tests run as a user.
func asUnprivileged(t *testing.T) bool {
	t.Helper()
	if os.Getuid() != 0 {
		return true
	}
	// A copy of the test binary that nobody may run.
	dir, err := os.MkdirTemp("", "snap-as-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "snap.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Skipf("cannot copy the test binary to run it as nobody: %v", err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil {
		t.Fatalf("the test failed as nobody: %v", err)
	}
	return false
}

// (run again with the plan spilled: see TestRestoresWithThePlanSpilled)
func init() {
	spilledTests = append(spilledTests, struct {
		name string
		fn   func(t *testing.T, spill int)
	}{"UnreadableEntriesLeftAlone", testUnreadableEntriesLeftAlone})
}

// TestUnreadableEntriesLeftAlone: a file and a folder the save may not read
// do not fail it: they are recorded as unreadable, not captured, and a
// restore neither deletes nor replaces what is at them.
func TestUnreadableEntriesLeftAlone(t *testing.T) {
	t.Parallel()
	testUnreadableEntriesLeftAlone(t, 0)
}

// testUnreadableEntriesLeftAlone is TestUnreadableEntriesLeftAlone, with the
// restore's plan written out spill entries a block (0: as in production; see
// TestRestoresWithThePlanSpilled).
func testUnreadableEntriesLeftAlone(t *testing.T, spill int) {
	if !asUnprivileged(t) {
		return
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a", "secret.key": "secret", "private/notes.txt": "notes", "sub/b.txt": "b"})
	os.Chmod(filepath.Join(dir, "secret.key"), 0)
	os.Chmod(filepath.Join(dir, "private"), 0)
	defer os.Chmod(filepath.Join(dir, "private"), 0o755)
	snaps := t.TempDir()
	res, m := layerSave(t, dir, snaps, 0, 0)
	if want := []string{"private", "secret.key"}; !slices.Equal(res.Unreadable, want) || !slices.Equal(m.Header.Unreadable, want) {
		t.Fatalf("unreadable %v (manifest %v), want %v", res.Unreadable, m.Header.Unreadable, want)
	}
	// The tree changes around them; a restore brings back the rest and
	// leaves them as they are.
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed"), 0o644)
	os.Remove(filepath.Join(dir, "sub/b.txt"))
	r, err := Restore(context.Background(), dir, "", RestoreOptions{spillAt: spill, Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a" {
		t.Errorf("a.txt = %q, want it restored", b)
	}
	for _, p := range []string{"secret.key", "private"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v: a restore deleted what it could not read", p, err)
		}
	}
	if !slices.Equal(r.Unreadable, []string{"private", "secret.key"}) {
		t.Errorf("unreadable_paths %v", r.Unreadable)
	}
	// A snapshot taken when they were readable: the restore still leaves
	// them alone, since no backup could hold them now.
	os.Chmod(filepath.Join(dir, "secret.key"), 0o644)
	os.Chmod(filepath.Join(dir, "private"), 0o755)
	_, m2 := layerSave(t, dir, snaps, 1, 0)
	os.WriteFile(filepath.Join(dir, "secret.key"), []byte("new secret"), 0o644)
	os.Chmod(filepath.Join(dir, "secret.key"), 0)
	if _, err := Restore(context.Background(), dir, "", RestoreOptions{spillAt: spill, Manifest: m2}); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "secret.key"), 0o644)
	if b, _ := os.ReadFile(filepath.Join(dir, "secret.key")); string(b) != "new secret" {
		t.Errorf("secret.key = %q: a restore replaced a file it could not read", b)
	}
	// So does one from an archive read whole, compared with the tree as the
	// two are read.
	archive := filepath.Join(snaps, "s.tar.gz")
	if _, err := createWalked(context.Background(), dir, CreateOptions{Out: archive}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "secret.key"), []byte("newer secret"), 0o644)
	os.Chmod(filepath.Join(dir, "secret.key"), 0)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed again"), 0o644)
	if r, err = Restore(context.Background(), dir, archive, RestoreOptions{spillAt: spill}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Unreadable, []string{"secret.key"}) || r.Written != 1 {
		t.Errorf("from an archive: wrote %d, unreadable_paths %v", r.Written, r.Unreadable)
	}
	os.Chmod(filepath.Join(dir, "secret.key"), 0o644)
	if b, _ := os.ReadFile(filepath.Join(dir, "secret.key")); string(b) != "newer secret" {
		t.Errorf("secret.key = %q: a restore from an archive replaced a file it could not read", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a" {
		t.Errorf("a.txt = %q, want it restored", b)
	}
}

// TestDiffLeavesOutWhatItCannotReadNow: a folder the snapshot read and the
// diff may not list now is left out of the diff (its files are not listed
// as deleted), whether the changes are handed on as the walk goes or held
// to be paired; the changes on either side of it in walk order are listed.
func TestDiffLeavesOutWhatItCannotReadNow(t *testing.T) {
	t.Parallel()
	if !asUnprivileged(t) {
		return
	}
	dir, snaps := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a", "private/notes.txt": "n", "private/deep/x.txt": "x", "q.txt": "q", "z.txt": "z"})
	_, m := layerSave(t, dir, snaps, 0, 0)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed"), 0o644)
	os.Remove(filepath.Join(dir, "q.txt"))
	os.WriteFile(filepath.Join(dir, "z.txt"), []byte("changed"), 0o644)
	os.Chmod(filepath.Join(dir, "private"), 0)
	defer os.Chmod(filepath.Join(dir, "private"), 0o755)
	want := []Change{
		{Type: "change", Op: OpModified, Path: "a.txt", Kind: "file"},
		{Type: "change", Op: OpDeleted, Path: "q.txt", Kind: "file"},
		{Type: "change", Op: OpModified, Path: "z.txt", Kind: "file"},
	}
	for _, fold := range []Folding{{}, {Case: true}} {
		var got []Change
		err := diffTree(context.Background(), dir, WalkOptions{}, m, fold, func(string, string) bool { return false }, func(ch Change) error {
			got = append(got, ch)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("names folding %v: %v, want %v", fold.Folds(), got, want)
		}
	}
}

// TestReplacedFolderHoldingAnUnreadablePath: a folder of the tree that the
// snapshot replaces by a file, holding a file that cannot be read (left
// alone: no backup could hold it), could not go: the restore is refused
// while planning (*LeftAloneError), the plan held or written out in
// blocks, and the tree is as it was. One holding a folder that cannot be
// listed is refused too, as it cannot be looked through.
func TestReplacedFolderHoldingAnUnreadablePath(t *testing.T) {
	t.Parallel()
	if !asUnprivileged(t) {
		return
	}
	src := t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "a", "Docs": "now a file"})
	snap := create(t, src, filepath.Join(t.TempDir(), "s.tar.gz"))
	for _, unreadable := range []string{"Docs/Sub/secret.key", "Docs/Sub/private/notes.txt"} {
		for _, at := range []int{1 << 30, 1, 2} {
			for _, manifest := range []bool{false, true} {
				root := t.TempDir()
				writeTree(t, root, map[string]string{"a.txt": "A", "Docs/a.txt": "1", unreadable: "mine"})
				locked := filepath.Join(root, "Docs", "Sub", strings.Split(unreadable, "/")[2])
				before := state(t, root) // (taken, as after, while it can be read)
				fi, err := os.Stat(locked)
				if err != nil {
					t.Fatal(err)
				}
				os.Chmod(locked, 0)
				opts := RestoreOptions{spillAt: at}
				archive := snap.Archive
				if manifest {
					opts.Manifest, archive = snap.Manifest, ""
				}
				_, err = Restore(context.Background(), root, archive, opts)
				os.Chmod(locked, fi.Mode().Perm())
				var la *LeftAloneError
				switch {
				case strings.HasSuffix(unreadable, "secret.key"):
					want := LeftAloneError{Folder: "Docs", Path: unreadable, Reason: "unreadable"}
					if !errors.As(err, &la) || *la != want {
						t.Fatalf("%s, blocks of %d, manifest %v: %v, want %#v", unreadable, at, manifest, err, want)
					}
				case err == nil || !strings.HasPrefix(err.Error(), "cannot restore Docs"):
					t.Fatalf("%s, blocks of %d, manifest %v: %v, want a refusal", unreadable, at, manifest, err)
				}
				if d := diffStates(before, state(t, root)); d != "" {
					t.Fatalf("%s, blocks of %d, manifest %v: refused, yet the tree changed:\n%s", unreadable, at, manifest, d)
				}
			}
		}
	}
}
