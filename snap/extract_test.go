package snap

import (
	"archive/tar"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// restorePlanned is Restore with the plan only (no extraction).
func restorePlanned(t *testing.T, root, archive string, opts RestoreOptions) (*RestoreResult, error) {
	t.Helper()
	opts.planEmpty = true
	return Restore(context.Background(), root, archive, opts)
}

// TestExtractIsThePlan: a whole archive written into an empty folder as it
// is read gives the tree and the result the plan gives — folders of every
// mode (read-only ones filled, at the top and below), empty folders,
// symlinks, executables, sparse content, and folders the archive implies
// without listing them — and leaves no staging folder behind.
func TestExtractIsThePlan(t *testing.T) {
	gitEnv(t)
	ctx := context.Background()
	src := t.TempDir()
	genTree(t, rand.New(rand.NewSource(11)), src, 300)
	writeTree(t, src, map[string]string{"ro/inner/f": "read-only above", "top-ro/g": "g", "zeros": strings.Repeat("\x00", 3*holeBlock) + "end", "allzero": strings.Repeat("\x00", 2*holeBlock)})
	for _, d := range []string{"ro/inner", "ro", "top-ro", "d0"} {
		os.Chmod(filepath.Join(src, d), 0o555)
	}
	t.Cleanup(func() { makeWritable(src) })
	full := filepath.Join(t.TempDir(), "full.tar.gz")
	create(t, src, full)
	implied := filepath.Join(t.TempDir(), "implied.tar.gz")
	os.WriteFile(implied, craft(t, []tarEntry{
		{name: "a/b/c/f", typ: tar.TypeReg, body: "deep"},
		{name: "a/b/g", typ: tar.TypeReg, body: "g"},
		{name: "a/l", typ: tar.TypeSymlink, link: "b/g"},
		{name: "e/f", typ: tar.TypeReg, body: "e", mode: 0o600},
		{name: "z", typ: tar.TypeReg, body: "z"},
	}), 0o644)

	for _, c := range []struct {
		archive string
		umask   int
	}{{full, 0o022}, {implied, 0o022}, {full, 0o077}, {implied, 0o002}} {
		archive := c.archive
		t.Run(fmt.Sprintf("%s,umask=%03o", filepath.Base(archive), c.umask), func(t *testing.T) {
			setUmask(t, c.umask)
			got, want := t.TempDir(), t.TempDir()
			t.Cleanup(func() { makeWritable(got); makeWritable(want) })
			gres, err := extract(ctx, got, archive, RestoreOptions{})
			if err != nil {
				t.Fatalf("extract: %v", err)
			}
			wres, err := restorePlanned(t, want, archive, RestoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gres, wres) {
				t.Errorf("extract said %+v, the plan %+v", gres, wres)
			}
			if d := diffStates(state(t, want), state(t, got)); d != "" {
				t.Errorf("extracted tree differs from the planned restore's:\n%s", d)
			}
			if archive == full {
				if d := diffStates(scopeOf(t, src), state(t, got)); d != "" {
					t.Errorf("extracted tree differs from its source:\n%s", d)
				}
			}
		})
	}
}

// scopeOf is the state of the tree genTree made at dir without what its
// .gitignore leaves out of a snapshot.
func scopeOf(t *testing.T, dir string) map[string]string {
	scope, _ := splitIgnored(state(t, dir))
	return scope
}

// TestExtractRefusesAsThePlan: every archive the plan refuses is refused
// into an empty folder too, with the same reason, and the folder is left
// empty — hostile entries (out of walk order among them: those are read by
// the plan), damage, an interruption.
func TestExtractRefusesAsThePlan(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	reg := byte(tar.TypeReg)
	src := t.TempDir()
	genTree(t, rand.New(rand.NewSource(3)), src, 80)
	good := filepath.Join(t.TempDir(), "s.tar.gz")
	create(t, src, good)
	data, _ := os.ReadFile(good)
	archives := damaged(data)
	for name, entries := range map[string][]tarEntry{
		"absolute path":      {{name: "/etc/evil", typ: reg}},
		"dot dot":            {{name: "a/../../evil", typ: reg}},
		"duplicate":          {{name: "a", typ: reg, body: "1"}, {name: "a", typ: reg, body: "2"}},
		"file then folder":   {{name: "a", typ: reg}, {name: "a/b", typ: reg}},
		"folder then file":   {{name: "a/b", typ: reg}, {name: "a", typ: reg}},
		"duplicate unsorted": {{name: "b", typ: reg}, {name: "a", typ: reg}, {name: "b", typ: reg}},
		"link then through":  {{name: "l", typ: tar.TypeSymlink, link: "d"}, {name: "l/x", typ: reg}},
		"fifo":               {{name: "ok", typ: reg, body: "fine"}, {name: "fifo", typ: tar.TypeFifo}},
		"into .git":          {{name: "ok", typ: reg}, {name: ".git/hooks/pre-commit", typ: reg}},
		"into a nested .git": {{name: "ok", typ: reg}, {name: "sub/.git/hooks/pre-commit", typ: reg}},
		".git into the tree": {{name: "ok", typ: reg}, {name: "sub/.git", typ: reg, body: "gitdir: ../ok\n"}},
		"bomb declared":      {{name: "big", typ: reg, size: 10 << 30}},
		"whiteout":           {{name: "a", typ: reg}, {name: "d/" + whiteoutPrefix + "x", typ: reg}},
	} {
		archives[name] = craft(t, entries)
	}
	for name, b := range archives {
		t.Run(name, func(t *testing.T) {
			archive := filepath.Join(t.TempDir(), "bad.tar.gz")
			os.WriteFile(archive, b, 0o644)
			want := t.TempDir()
			_, werr := restorePlanned(t, want, archive, RestoreOptions{})
			if werr == nil {
				t.Fatal("the plan takes it")
			}
			got := t.TempDir()
			_, err := Restore(context.Background(), got, archive, RestoreOptions{})
			if err == nil || err.Error() != werr.Error() {
				t.Fatalf("err = %v, the plan's %v", err, werr)
			}
			if left, _ := os.ReadDir(got); len(left) > 0 {
				t.Fatalf("refused, yet %s holds %v", got, left)
			}
		})
	}
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		got := t.TempDir()
		if _, err := Restore(ctx, got, good, RestoreOptions{}); err != context.Canceled {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if left, _ := os.ReadDir(got); len(left) > 0 {
			t.Fatalf("interrupted, yet %s holds %v", got, left)
		}
	})
}

// TestExtractOutOfWalkOrder: an archive not in walk order — real tar's,
// in the order the file system lists names — is not extracted (nothing
// written) but restored by the plan, whole.
func TestExtractOutOfWalkOrder(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	ctx := context.Background()
	unsorted := filepath.Join(t.TempDir(), "unsorted.tar.gz")
	os.WriteFile(unsorted, craft(t, []tarEntry{
		{name: "b/x", typ: tar.TypeReg, body: "bx"}, {name: "a", typ: tar.TypeReg, body: "a"}, {name: "b/w", typ: tar.TypeReg, body: "bw"},
	}), 0o644)
	dir := t.TempDir()
	if _, err := extract(ctx, dir, unsorted, RestoreOptions{}); err != errNotExtracted {
		t.Fatalf("extract of an archive out of walk order: %v, want errNotExtracted", err)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Fatalf("not extracted, yet %s holds %v", dir, left)
	}
	if _, err := Restore(ctx, dir, unsorted, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "file 644 a", "b": "dir 755", "b/w": "file 644 bw", "b/x": "file 644 bx"}
	if d := diffStates(want, state(t, dir)); d != "" {
		t.Fatalf("restored:\n%s", d)
	}

	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("no tar")
	}
	src := t.TempDir()
	genTree(t, rand.New(rand.NewSource(8)), src, 120)
	os.RemoveAll(filepath.Join(src, "node_modules"))
	byTar := filepath.Join(t.TempDir(), "tar.tar.gz")
	if out, err := exec.Command("tar", "-czf", byTar, "-C", src, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	dir = t.TempDir()
	if _, err := Restore(ctx, dir, byTar, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(state(t, src), state(t, dir)); d != "" {
		t.Fatalf("real tar's archive restored:\n%s", d)
	}
}

// TestExtractIndexes: an extraction indexes the archive for
// createFromArchive as the plan does, and drops the index past adoptHeld
// entries (the caller then snapshots the tree as usual).
func TestExtractIndexes(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	ctx := context.Background()
	src, snaps := t.TempDir(), t.TempDir()
	genTree(t, rand.New(rand.NewSource(4)), src, 200)
	res, want := layerSave(t, src, snaps, 0, 0)
	archive := res.Manifest.Header.Archive

	_, x, err := restoreIndexedTest(ctx, t.TempDir(), archive, RestoreOptions{})
	if err != nil || x == nil {
		t.Fatalf("restore indexed: %v, index %v", err, x != nil)
	}
	checkIndex(t, x, want)

	dir := t.TempDir()
	_, x, err = restoreIndexedTest(ctx, dir, archive, RestoreOptions{adoptHeld: len(want.Entries) - 1})
	if err != nil || x != nil {
		t.Fatalf("restore indexed past adoptHeld: %v, index %v; want no index", err, x != nil)
	}
	if d := diffStates(scopeOf(t, src), state(t, dir)); d != "" {
		t.Fatalf("restored without the index:\n%s", d)
	}
}
