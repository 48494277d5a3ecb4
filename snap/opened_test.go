package snap

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheckPastTheIndex checks a chain whose archives are too big for the
// Verifier to index (the limits made tiny): each is read beside a pass over
// the manifest, and finds what indexing finds — every snapshot right,
// whole or opened; a file whose hash or place its manifest gets wrong
// blamed; a manifest from before places were recorded checked by an index
// after all.
func TestCheckPastTheIndex(t *testing.T) {
	t.Parallel()
	const n = 4
	name := savedChain(t, 23, 150, n)
	base := filepath.Join(filepath.Dir(name(0)), "snapshot.tar.gz")
	var whole []string          // archives indexed whole after all
	small := func() *Verifier { // (indexing 4 files of an archive at most, 8 in all)
		v := NewVerifier()
		v.limit, v.most, v.indexedWhole = 4, 8, func(a string) { whole = append(whole, a) }
		return v
	}
	v := small()
	for i := 0; i < n; i++ {
		for _, read := range []func(string) (*Manifest, error){ReadManifest, OpenManifest} {
			m, err := read(name(i))
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Check(context.Background(), m); err != nil {
				t.Fatalf("snapshot %d (opened %v): %v", i, m.Opened(), err)
			}
			if i == 0 && (len(v.index[base]) > 0 || v.errs[base] != errTooMany) {
				t.Fatalf("the full snapshot's archive of 150 files was indexed (limit %d)", v.limit)
			}
		}
	}
	if len(whole) > 0 {
		t.Fatalf("archives in walk order (whiteouts aside) were indexed whole: %q", whole)
	}
	if v.held > v.most {
		t.Fatalf("the verifier holds %d files, past its budget of %d", v.held, v.most)
	}

	// damaged returns the newest manifest with change made to its files
	// in the full snapshot's archive, its tree hash made to agree.
	damaged := func(change func(files []*Entry)) *Manifest {
		m, err := ReadManifest(name(n - 1))
		if err != nil {
			t.Fatal(err)
		}
		var files []*Entry
		for i := range m.Entries {
			if e := &m.Entries[i]; e.Kind == KindFile && e.Src == base {
				files = append(files, e)
			}
		}
		if len(files) < 10 {
			t.Fatalf("%d files of the newest snapshot in the full one's archive: too few", len(files))
		}
		change(files)
		m.Header.TreeHash = TreeHash(m.Entries)
		return m
	}
	for _, c := range []struct {
		name, want string
		change     func(files []*Entry)
	}{
		{"a wrong hash", "differs from its manifest's hash", func(f []*Entry) { f[5].Hash = f[6].Hash }},
		{"a place no file starts at", "where its manifest says its content is", func(f []*Entry) { f[5].Skip++ }},
		{"another file's place", "where its manifest says", func(f []*Entry) { f[5].COff, f[5].Skip = f[7].COff, f[7].Skip }},
		{"a place past the archive", "where its manifest says its content is", func(f []*Entry) { f[len(f)-1].COff += 1 << 30 }},
		{"no places (an old manifest)", "", func(f []*Entry) {
			for _, e := range f {
				e.COff, e.Skip = 0, 0
			}
		}},
		{"no places and a wrong hash", "differs from its manifest's hash", func(f []*Entry) {
			for _, e := range f {
				e.COff, e.Skip = 0, 0
			}
			f[3].Hash = f[2].Hash
		}},
	} {
		err := small().Check(context.Background(), damaged(c.change))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestEncodeOpenedIsEncode writes every manifest of a chain again, in full
// and as a delta over each older one (what gc does to a checkpoint whose
// parent it deletes), read whole and opened with OpenManifest (read in
// passes, lines straddling chunks): the bytes are the same.
func TestEncodeOpenedIsEncode(t *testing.T) {
	t.Parallel()
	const n = 4
	name := savedChain(t, 29, 120, n)
	encode := func(read func(string) (*Manifest, error), i, over int) string {
		m, err := read(name(i))
		if err != nil {
			t.Fatal(err)
		}
		var parent *Manifest
		m.Header.Parent = ""
		if over >= 0 {
			if parent, err = read(name(over)); err != nil {
				t.Fatal(err)
			}
			m.Header.Parent = parent.File
		}
		var b strings.Builder
		if err := m.Encode(&b, filepath.Dir(name(i)), parent); err != nil {
			t.Fatalf("encode %d over %d (opened %v): %v", i, over, m.Opened(), err)
		}
		return b.String()
	}
	for i := 1; i < n; i++ {
		for over := -1; over < i; over++ {
			want, got := encode(ReadManifest, i, over), encode(openChunked(61), i, over)
			if got != want {
				t.Fatalf("manifest %d over %d, opened:\n%s\nread whole:\n%s", i, over, got, want)
			}
			if over >= 0 && strings.Count(want, "\n") >= 120 {
				t.Fatalf("manifest %d over %d is written in full (%d lines)", i, over, strings.Count(want, "\n"))
			}
		}
	}
}

// TestCountChangesIsDiffCounted counts the changes between every two
// snapshots of a chain, the newer read whole or opened: the counts are
// Diff's list counted (folders not counted; a change of kind
// counted by the new one's).
func TestCountChangesIsDiffCounted(t *testing.T) {
	t.Parallel()
	const n = 5
	name := savedChain(t, 31, 100, n)
	read := func(f func(string) (*Manifest, error), i int) *Manifest {
		m, err := f(name(i))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			changes, err := Diff(context.Background(), DiffOptions{From: read(ReadManifest, i), To: read(ReadManifest, j)})
			if err != nil {
				t.Fatal(err)
			}
			var want ChangeCounts
			for _, c := range changes {
				switch {
				case c.Kind == "dir":
				case c.Op == OpAdded:
					want.Added++
				case c.Op == OpDeleted:
					want.Deleted++
				default:
					want.Modified++
				}
			}
			if i != j && want == (ChangeCounts{}) {
				t.Fatalf("snapshots %d and %d do not differ", i, j)
			}
			for _, f := range []func(string) (*Manifest, error){ReadManifest, OpenManifest} {
				cur := read(f, j)
				if got, err := CountChanges(read(ReadManifest, i), cur, Folding{}); err != nil || got != want {
					t.Fatalf("%d to %d (opened %v): %+v, %v; want %+v", i, j, cur.Opened(), got, err, want)
				}
			}
		}
	}
}

// TestDiffToAnOpenedManifestIsDiffToOneReadWhole lists the changes between
// every two snapshots of a chain with the newer opened with OpenManifest:
// the list is the one of both read whole.
func TestDiffToAnOpenedManifestIsDiffToOneReadWhole(t *testing.T) {
	t.Parallel()
	const n = 4
	name := savedChain(t, 37, 100, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			old, _ := ReadManifest(name(i))
			whole, _ := ReadManifest(name(j))
			opened, err := openChunked(61)(name(j))
			if err != nil {
				t.Fatal(err)
			}
			want, err1 := Diff(context.Background(), DiffOptions{From: old, To: whole})
			got, err2 := Diff(context.Background(), DiffOptions{From: old, To: opened})
			if err1 != nil || err2 != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%d to %d: opened %v (%v), whole %v (%v)", i, j, got, err2, want, err1)
			}
		}
	}
}

// TestOverlayOpenedIsOverlay lays entries over every snapshot of a chain
// (one changed, one new, one taken out) read whole and opened: a pass over
// either overlay meets the same entries, and Pick finds in it what a pass
// does.
func TestOverlayOpenedIsOverlay(t *testing.T) {
	t.Parallel()
	const n = 3
	name := savedChain(t, 41, 80, n)
	lines := func(m *Manifest) []string {
		var out []string
		m.each(func(e *Entry) error { out = append(out, string(appendEntryLine(nil, e, "", "/"))); return nil })
		return out
	}
	for i := 0; i < n; i++ {
		whole, _ := ReadManifest(name(i))
		var file *Entry
		for j := range whole.Entries {
			if whole.Entries[j].Kind == KindFile {
				file = &whole.Entries[j]
			}
		}
		changed := *file
		changed.Hash, changed.Size = strings.Repeat("a", 64), 1
		set := []Entry{changed, {Path: "zz-new/file", Kind: KindFile, Mode: 0o644, Hash: strings.Repeat("b", 64), Src: file.Src}}
		remove := []string{whole.Entries[len(whole.Entries)/2].Path}
		want := lines(whole.Overlay(set, remove))
		opened, err := openChunked(61)(name(i))
		if err != nil {
			t.Fatal(err)
		}
		over := opened.Overlay(set, remove)
		if got := lines(over); !slices.Equal(got, want) {
			t.Fatalf("overlay of %d, opened:\n%s\nwhole:\n%s", i, strings.Join(got, ""), strings.Join(want, ""))
		}
		if !slices.Contains(want, string(appendEntryLine(nil, &changed, "", "/"))) || slices.Equal(want, lines(whole)) {
			t.Fatalf("overlay of %d lacks what was laid over it", i)
		}
		picked, err := over.Pick(func(p string) bool { return p == changed.Path || p == "zz-new/file" })
		if err != nil || len(picked) != 2 || picked[0].Hash != changed.Hash {
			t.Fatalf("pick from the overlay of %d: %+v, %v", i, picked, err)
		}
	}
}

// savedChain saves a chain of n snapshots (the first full, layers over it)
// of a random tree of files paths under a temporary folder, with random
// edits between, and returns the name of each one's manifest.
func savedChain(t *testing.T, seed int64, files, n int) func(i int) string {
	t.Helper()
	gitEnv(t)
	rng := rand.New(rand.NewSource(seed))
	dir, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, files)
	for i := 0; i < n; i++ {
		if i > 0 {
			mutate(t, rng, dir)
		}
		layerSave(t, dir, snaps, i, 0)
	}
	return func(i int) string { return filepath.Join(snaps, fmt.Sprint(i), "manifest") }
}
