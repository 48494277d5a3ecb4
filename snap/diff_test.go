package snap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// changeTree writes a tree of n files in a few folders, takes a layered
// snapshot of it in snaps, then changes it every way a diff lists: files
// modified, deleted, added (in folders old and new), a mode, a folder
// replaced by a file. It returns the snapshot's manifest file.
func changeTree(t *testing.T, dir, snaps string, n int) string {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("d%d/f%d.txt", i%7, i)] = fmt.Sprintf("file %d\n", i)
	}
	files["gone/x.txt"] = "x"
	writeTree(t, dir, files)
	layerSave(t, dir, snaps, 0, 0)
	for i := 0; i < n; i += 3 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%d/f%d.txt", i%7, i)), []byte("changed\n"), 0o644)
	}
	for i := 1; i < n; i += 11 {
		os.Remove(filepath.Join(dir, fmt.Sprintf("d%d/f%d.txt", i%7, i)))
	}
	os.Chmod(filepath.Join(dir, "d2/f2.txt"), 0o755)
	writeTree(t, dir, map[string]string{"d3/new.txt": "new", "new/a.txt": "a"})
	os.RemoveAll(filepath.Join(dir, "gone"))
	os.WriteFile(filepath.Join(dir, "gone"), []byte("a file now"), 0o644)
	return filepath.Join(snaps, "0", "manifest")
}

// TestDiffHandsOnChangesAsFound: the changes are handed on in path order
// as the tree is walked, the same as when they are held to be paired
// (where names fold), and an error from fn ends the diff at once.
func TestDiffHandsOnChangesAsFound(t *testing.T) {
	t.Parallel()
	dir, snaps := t.TempDir(), t.TempDir()
	file := changeTree(t, dir, snaps, 3000) // (more than a chunk of the walk's)
	m, err := OpenManifest(file)
	if err != nil {
		t.Fatal(err)
	}
	var streamed []Change
	err = diffTree(context.Background(), dir, WalkOptions{}, m, Folding{}, nil, func(ch Change) error {
		streamed = append(streamed, ch)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[Op]int{}
	for _, ch := range streamed {
		ops[ch.Op]++
	}
	// 909 modified and "gone" a file; 273 deleted and gone/x.txt; d3/new.txt, new, new/a.txt.
	if want := map[Op]int{OpModified: 910, OpDeleted: 274, OpAdded: 3, OpMode: 1}; !reflect.DeepEqual(ops, want) {
		t.Errorf("changes %v, want %v", ops, want)
	}
	if !slices.IsSortedFunc(streamed, func(a, b Change) int { return comparePaths(a.Path, b.Path) }) {
		t.Error("changes not handed on in path order")
	}
	// Held to be paired, as where names fold (none here differ but by case).
	var held []Change
	same := func(string, string) bool { return false }
	err = diffTree(context.Background(), dir, WalkOptions{}, m, Folding{Case: true}, same, func(ch Change) error {
		held = append(held, ch)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(held, streamed) {
		t.Errorf("held and paired: %d changes, handed on as found: %d", len(held), len(streamed))
	}
	// Ended by fn's error, at the first change.
	stop := errors.New("stop")
	calls := 0
	err = diffManifestTree(context.Background(), dir, m, WalkOptions{}, func(Change) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("ended by fn: %v after %d calls", err, calls)
	}
	// Two snapshots: the same changes, handed on or held.
	layerSave(t, dir, snaps, 1, 0)
	for _, fold := range []Folding{{}, {Case: true}} {
		old, err1 := OpenManifest(file)
		cur, err2 := OpenManifest(filepath.Join(snaps, "1", "manifest"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		var got []Change
		if err := diffManifests(old, cur, fold, func(ch Change) error { got = append(got, ch); return nil }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, streamed) {
			t.Errorf("between two snapshots (%v): %d changes, want %d", fold, len(got), len(streamed))
		}
		calls = 0
		if err := diffManifests(old, cur, fold, func(Change) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
			t.Errorf("between two snapshots (%v), ended by fn: %v after %d calls", fold, err, calls)
		}
	}
}

// TestFileReader reads a snapshot's files as a diff asks for them: in walk
// order in one pass, a path it lacks as nothing, one asked out of order by a
// pass of its own, a file over the limit as its first limit+1 bytes, a
// symlink as its target, each with its kind and mode; a snapshot whose
// archive is gone fails the read, and Close ends the pass wherever it is.
func TestFileReader(t *testing.T) {
	t.Parallel()
	dir, snaps := t.TempDir(), t.TempDir()
	files := map[string]string{"empty": "", "big.txt": strings.Repeat("b", 100), "link-target": "t"}
	for i := range 50 {
		files[fmt.Sprintf("d/f%02d", i)] = fmt.Sprint(i)
	}
	writeTree(t, dir, files)
	os.Symlink("link-target", filepath.Join(dir, "link"))
	os.Chmod(filepath.Join(dir, "d", "f40"), 0o755)
	layerSave(t, dir, snaps, 0, 0)
	file := filepath.Join(snaps, "0", "manifest")
	m, err := OpenManifest(file)
	if err != nil {
		t.Fatal(err)
	}
	r := NewFileReader(m, 10)
	var got Content
	read := func(p string) []byte {
		t.Helper()
		if got, err = r.Read(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return got.Data
	}
	if b := read("big.txt"); string(b) != strings.Repeat("b", 11) {
		t.Errorf("big.txt (over the limit) read %q, want its first 11 bytes", b)
	}
	if b := read("d/f03"); string(b) != "3" {
		t.Errorf("d/f03 = %q", b)
	}
	if b := read("d/f031"); b != nil { // (between two it has)
		t.Errorf("d/f031, not in the snapshot: %q", b)
	}
	if b := read("d/f40"); string(b) != "40" || got.Kind != KindFile || got.Mode != 0o755 || got.Size != 2 {
		t.Errorf("d/f40 = %q %+v", b, got)
	}
	if b := read("d/f10"); string(b) != "10" { // out of order
		t.Errorf("d/f10, asked after d/f40: %q", b)
	}
	if b := read("d/f41"); string(b) != "41" { // the pass goes on
		t.Errorf("d/f41 = %q", b)
	}
	if b := read("empty"); b == nil || len(b) != 0 {
		t.Errorf("empty = %#v, want no bytes, not nil", b)
	}
	if b := read("link"); b != nil || got.Kind != KindSymlink || got.Link != "link-target" {
		t.Errorf("link, a symlink: %q %+v", b, got)
	}
	if b := read("zz"); b != nil || got.Kind != 0 { // past the end
		t.Errorf("zz = %q %+v", b, got)
	}
	if b := read("zzz"); b != nil { // once the pass is over
		t.Errorf("zzz = %q", b)
	}
	r.Close()
	r.Close() // (twice is no harm)
	// Closed part way, or before any read.
	r = NewFileReader(m, 10)
	read("d/f01")
	r.Close()
	NewFileReader(m, 10).Close()
	// The archive gone: the read fails, naming it.
	arch := filepath.Join(snaps, "0", "snapshot.tar.gz")
	os.Rename(arch, arch+".aside")
	r = NewFileReader(m, 10)
	defer r.Close()
	if _, err := r.Read("d/f05"); err == nil || !strings.Contains(err.Error(), arch) {
		t.Errorf("archive gone: %v", err)
	}
	if _, err := r.Read("d/f06"); err == nil {
		t.Error("archive gone: a later read did not fail")
	}
}

// TestFetcherReadsOnInAMember: files of one gzip member asked for in
// archive order are read on from where the last one ended; asked for in
// any other order, each is inflated from its member's start. The content is
// the same either way, and a file read only in part leaves the next one
// whole.
func TestFetcherReadsOnInAMember(t *testing.T) {
	t.Parallel()
	dir, snaps := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("f%03d", i)] = strings.Repeat(fmt.Sprint(i), i)
	}
	writeTree(t, dir, files)
	_, m := layerSave(t, dir, snaps, 0, 0)
	var es []Entry
	for _, e := range m.Entries {
		if e.Kind == KindFile {
			es = append(es, e)
		}
	}
	if es[0].COff != es[len(es)-1].COff {
		t.Fatalf("the files are in more than one member (%d, %d): the test needs one", es[0].COff, es[len(es)-1].COff)
	}
	f := newFetcher()
	defer f.close()
	check := func(order string, e *Entry, part bool) {
		t.Helper()
		r, err := f.open(e)
		if err != nil {
			t.Fatalf("%s: %s: %v", order, e.Path, err)
		}
		if part {
			io.CopyN(io.Discard, r, 2)
			return
		}
		b, err := io.ReadAll(r)
		if err != nil || string(b) != files[e.Path] {
			t.Fatalf("%s: %s read %d bytes (%v), want %d", order, e.Path, len(b), err, len(files[e.Path]))
		}
	}
	for i := range es {
		check("in order", &es[i], i%5 == 1)
	}
	for i := len(es) - 1; i >= 0; i-- {
		check("backwards", &es[i], false)
	}
	for i, j := 0, len(es)-1; i < j; i, j = i+7, j-11 {
		check("to and fro", &es[i], false)
		check("to and fro", &es[j], true)
	}
}

// TestDiffRefuses: Diff compares one snapshot with one other side, and
// refuses options that choose none, two, or do not apply.
func TestDiffRefuses(t *testing.T) {
	t.Parallel()
	m := &Manifest{}
	dir := t.TempDir()
	for name, opts := range map[string]DiffOptions{
		"nothing":                 {},
		"no from":                 {Root: dir},
		"two froms":               {From: m, FromArchive: "a.tar.gz", Root: dir},
		"no to":                   {From: m},
		"two tos":                 {From: m, Root: dir, To: m},
		"archive to a manifest":   {FromArchive: "a.tar.gz", To: m},
		"walk with two manifests": {From: m, To: m, Walk: WalkOptions{Entries: 1}},
		"fold with a tree":        {From: m, Root: dir, Fold: Folding{Case: true}},
		"restore's walk":          {FromArchive: "a.tar.gz", Root: dir, Restore: RestoreOptions{Walk: WalkOptions{Ignore: []string{"x"}}}},
	} {
		if err := DiffEach(context.Background(), opts, func(Change) error { return nil }); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
