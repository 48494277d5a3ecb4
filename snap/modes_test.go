package snap

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestRestoreKeepsModesWhateverTheUmask: files of 0600, 0640, 0644, 0700
// and 0755 and folders of 0700, 0750 and 0755 come back with exactly their
// modes under umask 022, 077 and 002 — into an empty folder (written as
// the archive is read) and over a tree that holds them with other modes,
// or not at all (the plan) — and the archive is readable by its owner
// alone.
func TestRestoreKeepsModesWhateverTheUmask(t *testing.T) {
	gitEnv(t)
	ctx := context.Background()
	files := map[string]fs.FileMode{
		"secret": 0o600, "team": 0o640, "open": 0o644, "own.sh": 0o700, "run.sh": 0o755,
		"private/key": 0o600, "group/notes": 0o640, "group/inner/x": 0o600, "public/a": 0o644,
	}
	dirs := map[string]fs.FileMode{"private": 0o700, "group": 0o750, "group/inner": 0o700, "public": 0o755, "empty": 0o750}
	// writeModes writes the tree at root, files and folders given the
	// modes mode says (whatever the umask), without those skip names.
	writeModes := func(t *testing.T, root string, mode func(fs.FileMode) fs.FileMode, skip ...string) {
		t.Helper()
		for d := range dirs {
			if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		for name, m := range files {
			p := filepath.Join(root, name)
			if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, mode(m))
		}
		for d, m := range dirs {
			os.Chmod(filepath.Join(root, d), mode(m))
		}
		for _, s := range skip {
			if err := os.RemoveAll(filepath.Join(root, s)); err != nil {
				t.Fatal(err)
			}
		}
	}
	src := t.TempDir()
	writeModes(t, src, func(m fs.FileMode) fs.FileMode { return m })
	archive := filepath.Join(t.TempDir(), "s.tar.gz")
	res := create(t, src, archive)
	for _, p := range []string{archive, res.Manifest.File} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 600 (%v)", p, fi.Mode(), err)
		}
	}
	want := state(t, src)
	for _, mask := range []int{0o022, 0o077, 0o002} {
		t.Run(fmt.Sprintf("umask=%03o", mask), func(t *testing.T) {
			setUmask(t, mask)
			empty := t.TempDir()
			if _, err := Restore(ctx, empty, archive, RestoreOptions{}); err != nil {
				t.Fatal(err)
			}
			if d := diffStates(want, state(t, empty)); d != "" {
				t.Errorf("restored into an empty folder:\n%s", d)
			}
			over := t.TempDir()
			open := func(m fs.FileMode) fs.FileMode { // readable and writable by all
				if m&0o100 != 0 {
					return 0o777
				}
				return 0o666
			}
			writeModes(t, over, open, "private", "group/inner")
			if _, err := Restore(ctx, over, archive, RestoreOptions{}); err != nil {
				t.Fatal(err)
			}
			if d := diffStates(want, state(t, over)); d != "" {
				t.Errorf("restored over the tree of other modes:\n%s", d)
			}
		})
	}
}
