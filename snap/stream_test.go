package snap

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// openedEntries collects an opened manifest's entries, copied (they are
// read as the pass goes).
func openedEntries(t *testing.T, m *Manifest) []Entry {
	t.Helper()
	var out []Entry
	err := m.each(func(e *Entry) error {
		c := *e
		c.Path, c.Hash, c.Link = strings.Clone(e.Path), strings.Clone(e.Hash), strings.Clone(e.Link)
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// chunked makes the passes over m read its full manifest chunk bytes at a
// time (0: streamChunk): lines straddle chunks.
func chunked(m *Manifest, chunk int) *Manifest {
	if m != nil && m.stream != nil {
		m.stream.chunk = chunk
	}
	return m
}

// openChunked is OpenManifest, the passes over what it opens reading chunk
// bytes at a time.
func openChunked(chunk int) func(name string) (*Manifest, error) {
	return func(name string) (*Manifest, error) {
		m, err := OpenManifest(name)
		return chunked(m, chunk), err
	}
}

// TestOpenManifestReadsWhatReadManifestReads reads every manifest of a chain
// of layers over random edits both ways, with chunks large and so small
// that every line straddles two: the same entries, files and archives.
func TestOpenManifestReadsWhatReadManifestReads(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	rng := rand.New(rand.NewSource(5))
	dir, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 150)
	const n = 10
	for i := 0; i < n; i++ {
		if i > 0 {
			mutate(t, rng, dir)
		}
		layerSave(t, dir, snaps, i, 4) // a full snapshot every few layers: chains of several lengths
	}
	for _, chunk := range []int{1 << 20, 61} {
		for i := 0; i < n; i++ {
			name := filepath.Join(snaps, fmt.Sprint(i), "manifest")
			read, err := ReadManifest(name)
			if err != nil {
				t.Fatal(err)
			}
			opened, err := openChunked(chunk)(name)
			if err != nil {
				t.Fatal(err)
			}
			if opened.Entries != nil || opened.stream == nil {
				t.Fatalf("manifest %d: opened with its entries held", i)
			}
			if got := openedEntries(t, opened); !reflect.DeepEqual(got, read.Entries) {
				t.Fatalf("manifest %d, chunk %d: opened entries differ from read ones (%d vs %d)", i, chunk, len(got), len(read.Entries))
			}
			if !reflect.DeepEqual(opened.Header, read.Header) || !slices.Equal(opened.Files(), read.Files()) {
				t.Fatalf("manifest %d: header or files differ:\n%+v %v\n%+v %v", i, opened.Header, opened.Files(), read.Header, read.Files())
			}
			if err := opened.CheckArchives(); err != nil {
				t.Fatal(err)
			}
			if err := NewVerifier().Check(context.Background(), opened); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestLayerOverAnOpenedParentIsTheSame takes each layer of a chain twice,
// over the parent read whole and over the parent opened, from the same
// tree: the two manifests list the same lines, and the same changes. Over
// the opened parent the passes after inherit's read its recall (see
// recall), or, when too much changed for one (a small recallMax), the
// parent again: both ways give the same.
//
// A pass's entries are slices of a buffer the next chunk overwrites: with
// chunks so small that every line straddles two, a string kept past its
// call would read another line's bytes.
func TestLayerOverAnOpenedParentIsTheSame(t *testing.T) {
	t.Parallel()
	for _, max := range []int{recallMax, 3} {
		for _, chunk := range []int{1 << 20, 61} {
			t.Run(fmt.Sprintf("recallMax=%d,chunk=%d", max, chunk), func(t *testing.T) {
				layersOverOpenedParents(t, max, chunk)
			})
		}
	}
}

func layersOverOpenedParents(t *testing.T, recallMax, chunk int) {
	recalled := recallMax > 3
	gitEnv(t)
	rng := rand.New(rand.NewSource(9))
	dir := t.TempDir()
	read, opened := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 150)
	save := func(snaps string, i int, open bool) (*Manifest, []Change) {
		out := filepath.Join(snaps, fmt.Sprint(i))
		os.MkdirAll(out, 0o755)
		opts := CreateOptions{Out: filepath.Join(out, "snapshot.tar.gz"), Layer: true, recallMax: recallMax}
		if i > 0 {
			pick := ReadManifest
			if open {
				pick = openChunked(chunk)
			}
			p, err := pick(filepath.Join(snaps, fmt.Sprint(i-1), "manifest"))
			if err != nil {
				t.Fatal(err)
			}
			opts.Parent = p
		}
		res, err := createWalked(context.Background(), dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		var changes []Change
		if i > 0 {
			if used := opts.Parent.recall.of(res.Manifest.Entries); used != (open && recalled) {
				t.Fatalf("layer %d: recall used %v, want %v", i, used, open && recalled)
			}
			if changes, err = Diff(context.Background(), DiffOptions{From: opts.Parent, To: res.Manifest}); err != nil {
				t.Fatal(err)
			}
		}
		if err := WriteManifestFile(filepath.Join(out, "manifest"), res.Manifest, opts.Parent); err != nil {
			t.Fatal(err)
		}
		return opts.Parent, changes
	}
	for i := 0; i < 8; i++ {
		if i > 0 {
			mutate(t, rng, dir)
			touchSome(t, rng, dir) // new times, same content: hashed again, the parent's location kept
		}
		pr, cr := save(read, i, false)
		po, co := save(opened, i, true)
		if !reflect.DeepEqual(cr, co) {
			t.Fatalf("layer %d: changes over the opened parent differ:\n%v\nover the parent read whole:\n%v", i, co, cr)
		}
		a, _ := os.ReadFile(filepath.Join(read, fmt.Sprint(i), "manifest"))
		b, _ := os.ReadFile(filepath.Join(opened, fmt.Sprint(i), "manifest"))
		_, la, _ := strings.Cut(string(a), "\n")
		_, lb, _ := strings.Cut(string(b), "\n")
		if la != lb {
			t.Fatalf("layer %d: the lines over an opened parent differ:\n%s\nover the parent read whole:\n%s", i, lb, la)
		}
		if i > 0 {
			m, _ := ReadManifest(filepath.Join(read, fmt.Sprint(i), "manifest"))
			ca, err1 := Diff(context.Background(), DiffOptions{From: pr, To: m})
			cb, err2 := Diff(context.Background(), DiffOptions{From: po, To: m})
			if err1 != nil || err2 != nil || !reflect.DeepEqual(ca, cb) {
				t.Fatalf("layer %d: changes differ: %v %v\n%v\n%v", i, err1, err2, ca, cb)
			}
		}
	}
}

// touchSome gives a few of the files under dir new times.
func touchSome(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	when := time.Now().Add(time.Duration(rng.Intn(1000)) * time.Second)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && rng.Intn(10) == 0 {
			if err := os.Chtimes(p, when, when); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
}

// TestOpenedManifestReplacedUnderAPass says so rather than read another
// tree's entries.
func TestOpenedManifestReplacedUnderAPass(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	rng := rand.New(rand.NewSource(3))
	dir, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 20)
	layerSave(t, dir, snaps, 0, 0)
	name := filepath.Join(snaps, "0", "manifest")
	m, err := OpenManifest(name)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(name)
	os.WriteFile(name, []byte(strings.Replace(string(b), `"files":`, `"files": `, 1)), 0o644)
	err = m.each(func(*Entry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Fatalf("a replaced manifest read as %v", err)
	}
}

// TestReadFilesFromAnOpenedManifest reads a layer's files through the
// manifest read whole and opened, with chunks so small that every line
// straddles two: the same paths, the same contents.
func TestReadFilesFromAnOpenedManifest(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	rng := rand.New(rand.NewSource(13))
	dir, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 120)
	layerSave(t, dir, snaps, 0, 0)
	mutate(t, rng, dir)
	layerSave(t, dir, snaps, 1, 0)
	name := filepath.Join(snaps, "1", "manifest")
	read, err := ReadManifest(name)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for i, e := range read.Entries {
		if e.Kind == KindFile && i%3 == 0 {
			want[e.Path] = true
		}
	}
	files := func(m *Manifest) map[string]string {
		out := map[string]string{}
		err := ReadFiles(m, func(p string) bool { return want[p] }, 1<<20, func(p string, data []byte) error {
			out[p] = string(data)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	whole := files(read)
	opened, err := openChunked(61)(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := files(opened); len(whole) != len(want) || !reflect.DeepEqual(got, whole) {
		t.Fatalf("opened: %d files, read whole: %d of %d wanted; or their contents differ", len(got), len(whole), len(want))
	}
}

// TestManifestArchivesAsItReads lists the archives of a full manifest and of
// layers over it, read as they go with lines straddling chunks: what each
// file itself names, as the manifest read whole says.
func TestManifestArchivesAsItReads(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	rng := rand.New(rand.NewSource(8))
	dir, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 60)
	for i := range 3 {
		if i > 0 {
			mutate(t, rng, dir)
		}
		layerSave(t, dir, snaps, i, 0)
		name := filepath.Join(snaps, fmt.Sprint(i), "manifest")
		got, err := manifestArchives(name, 61)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(name)
		m, _, err := parseManifest(string(b), filepath.Dir(name))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{m.Header.Archive}
		for _, e := range m.Entries {
			if e.Kind == KindFile && !slices.Contains(want, e.Src) {
				want = append(want, e.Src)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("snapshot %d: archives %q, the manifest read whole names %q", i, got, want)
		}
	}
}
