package snap

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/snap/pathspec"
)

// mountTmpfs mounts a tmpfs on dir (made if need be), unmounted when the
// test ends, or skips the test saying why (not root, no mount permission
// in this container).
func mountTmpfs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m,mode=755", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs on %s (%v: %s); run as root to test mounts in the tree", dir, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

// bindReadOnly bind-mounts the folder src on dir, read-only, unmounted when
// the test ends, or skips the test saying why.
func bindReadOnly(t *testing.T, src, dir string) {
	t.Helper()
	if out, err := exec.Command("mount", "--bind", src, dir).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot bind-mount %s (%v: %s); run as root to test mounts in the tree", dir, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot remount %s read-only (%v: %s)", dir, err, strings.TrimSpace(string(out)))
	}
}

// TestRestoreAcrossMounts: a tree with a tmpfs mounted at sub/mnt is
// restored exactly on both file systems — files added, changed and
// deleted, a file replaced by a folder and a folder by a file, on each —
// and the restore of a snapshot taken just before (what undo-restore does)
// brings that tree back exactly. What goes onto the tmpfs is staged there,
// so no rename crosses from one file system to the other; a staging
// folder a killed restore left at the mount's top is neither saved nor
// left behind.
func TestRestoreAcrossMounts(t *testing.T) {
	t.Parallel()
	for _, w := range restoreWays {
		t.Run(w.name, func(t *testing.T) {
			root, out := t.TempDir(), t.TempDir()
			mnt := filepath.Join(root, "sub", "mnt")
			mountTmpfs(t, mnt)
			writeTree(t, root, map[string]string{
				"keep": "k", "mod": "m1", "del": "d", "f2d": "file", "d2f/x": "x", "sub/y": "y",
				"sub/mnt/keep": "k", "sub/mnt/mod": "m1", "sub/mnt/del": "d", "sub/mnt/f2d": "file",
				"sub/mnt/d2f/x": "x", "sub/mnt/deep/er/z": "z",
			})
			os.Symlink("keep", filepath.Join(mnt, "link"))
			snapA := create(t, root, filepath.Join(out, "a.tar.gz"))
			want := state(t, root)

			for _, p := range []string{"del", "f2d", "d2f", "sub/mnt/del", "sub/mnt/f2d", "sub/mnt/d2f", "sub/mnt/deep", "sub/mnt/link"} {
				os.RemoveAll(filepath.Join(root, p))
			}
			for _, dir := range []string{root, mnt} {
				writeTree(t, dir, map[string]string{"mod": "m2, longer", "new": "n", "newdir/a/b": "b", "f2d/inside": "i", "d2f": "now a file"})
			}
			os.Symlink("mod", filepath.Join(mnt, "link"))
			changed := state(t, root)
			snapB := create(t, root, filepath.Join(out, "b.tar.gz")) // (the backup a restore takes)

			// A killed restore's staging folder at the mount's top.
			name, marker := newStagingName()
			writeTree(t, mnt, map[string]string{name + "/" + stagingMarker: string(marker), name + "/f1": "staged"})
			if tree, err := Walk(context.Background(), root, WalkOptions{}); err != nil {
				t.Fatal(err)
			} else {
				for _, e := range tree.Entries {
					if strings.Contains(e.Path, stagingPrefix) {
						t.Fatalf("the walk holds %s, a staging folder", e.Path)
					}
				}
			}

			if _, err := restoreWay(root, snapA, w.manifest, false, wayOpts(w.sparse, w.spill)); err != nil {
				t.Fatalf("restore: %v", err)
			}
			if d := diffStates(state(t, root), want); d != "" {
				t.Fatalf("after the restore, the tree differs from the snapshot:\n%s", d)
			}
			if _, err := restoreWay(root, snapB, w.manifest, false, wayOpts(w.sparse, w.spill)); err != nil {
				t.Fatalf("restore of the backup: %v", err)
			}
			if d := diffStates(state(t, root), changed); d != "" {
				t.Fatalf("after the restore of the backup, the tree differs from it:\n%s", d)
			}
		})
	}
}

// TestRestoreRefusesWhatMountsForbid: a restore that would change a
// read-only mount, or delete a mount point, is refused before anything
// changes (a dry run says the same), with an error naming the mount; one
// that leaves the mount alone goes through.
func TestRestoreRefusesWhatMountsForbid(t *testing.T) {
	t.Parallel()
	for _, w := range restoreWays {
		t.Run(w.name, func(t *testing.T) {
			root, out, src := t.TempDir(), t.TempDir(), t.TempDir()
			writeTree(t, root, map[string]string{"a": "1", "ro/r": "1", "sub/b": "1"})
			snap := create(t, root, filepath.Join(out, "s.tar.gz"))

			// Read-only: ro holds the same names, other content.
			writeTree(t, src, map[string]string{"r": "2", "extra": "2"})
			writeTree(t, root, map[string]string{"a": "2"})
			bindReadOnly(t, src, filepath.Join(root, "ro"))
			before := state(t, root)
			for _, dry := range []bool{true, false} {
				_, err := restoreWay(root, snap, w.manifest, dry, wayOpts(w.sparse, w.spill))
				var me *MountError
				if !errors.As(err, &me) || me.Mount != "ro" || !me.ReadOnly || !strings.Contains(err.Error(), "mounted at ro is read-only") {
					t.Fatalf("restore (dry run %v) over a read-only mount: %v, want a MountError naming ro", dry, err)
				}
				if d := diffStates(state(t, root), before); d != "" {
					t.Fatalf("a refused restore changed the tree:\n%s", d)
				}
			}
			// Left out of the paths restored, the mount does not stop it.
			opts := RestoreOptions{Manifest: snap.Manifest}
			archive := ""
			if !w.manifest {
				opts.Manifest, archive = nil, snap.Archive
			}
			var err error
			if opts.Paths, err = pathspec.Parse([]string{":(exclude)ro"}, pathspec.Options{}); err != nil {
				t.Fatal(err)
			}
			if _, err := Restore(context.Background(), root, archive, opts); err != nil {
				t.Fatalf("restore leaving ro out: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "a")); string(b) != "1" {
				t.Fatalf("a = %q after the restore, want 1", b)
			}

			// A mount point the snapshot does not have: never deleted.
			mountTmpfs(t, filepath.Join(root, "sub", "mnt"))
			writeTree(t, root, map[string]string{"sub/b": "2", "sub/mnt/m": "m"})
			before = state(t, root)
			opts.Paths, _ = pathspec.Parse([]string{":(exclude)ro"}, pathspec.Options{})
			_, err = Restore(context.Background(), root, archive, opts)
			var me *MountError
			if !errors.As(err, &me) || me.Mount != "sub/mnt" || me.Path != "sub/mnt" || !strings.Contains(err.Error(), "cannot restore sub/mnt: a file system is mounted there") {
				t.Fatalf("restore deleting a mount point: %v, want a MountError naming sub/mnt", err)
			}
			if d := diffStates(state(t, root), before); d != "" {
				t.Fatalf("a refused restore changed the tree:\n%s", d)
			}
		})
	}
}
