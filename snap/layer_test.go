package snap

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// layerSave takes a snapshot of dir into snaps/<n>/ as a layer over
// snaps/<n-1>/ (full for n == 0), the way the store does.
func layerSave(t *testing.T, dir, snaps string, n int, maxDepth int) (*Result, *Manifest) {
	t.Helper()
	out := filepath.Join(snaps, fmt.Sprint(n))
	os.MkdirAll(out, 0o755)
	opts := CreateOptions{Out: filepath.Join(out, "snapshot.tar.gz"), Layer: true, MaxDepth: maxDepth}
	var parent *Manifest
	if n > 0 {
		var err error
		if parent, err = ReadManifest(filepath.Join(snaps, fmt.Sprint(n-1), "manifest")); err != nil {
			t.Fatal(err)
		}
		opts.Parent = parent
	}
	res, err := createWalked(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var lp *Manifest
	if res.Layer {
		lp = parent
	}
	if err := WriteManifestFile(filepath.Join(out, "manifest"), res.Manifest, lp); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(filepath.Join(out, "manifest"))
	if err != nil {
		t.Fatal(err)
	}
	return res, m
}

// TestLayerChainRoundTrip saves a chain of layers over random edits, then
// restores every one of them, in a shuffled order, through its manifest
// (read whole, or opened and read as the restore goes, with chunks so
// small that every line straddles two): each must come back exactly, and
// every chain must verify.
func TestLayerChainRoundTrip(t *testing.T) {
	t.Parallel()
	testLayerChainRoundTrip(t, 0)
}

// testLayerChainRoundTrip is TestLayerChainRoundTrip, with the restore's
// plan written out spill entries a block (0: as in production; see
// TestRestoresWithThePlanSpilled).
func testLayerChainRoundTrip(t *testing.T, spill int) {
	gitEnv(t)
	rng := rand.New(rand.NewSource(11))
	dir := t.TempDir()
	snaps := t.TempDir()
	genTree(t, rng, dir, 150)
	const n = 12
	states := make([]map[string]string, n)
	for i := 0; i < n; i++ {
		if i > 0 {
			mutate(t, rng, dir)
		}
		res, m := layerSave(t, dir, snaps, i, 0)
		if (i > 0) != res.Layer {
			t.Fatalf("snapshot %d: layer = %v", i, res.Layer)
		}
		if m.Header.TreeHash != res.TreeHash {
			t.Fatalf("snapshot %d: manifest read back has tree hash %s, want %s", i, m.Header.TreeHash, res.TreeHash)
		}
		states[i], _ = splitIgnored(state(t, dir))
	}
	v := NewVerifier()
	for k, i := range rng.Perm(n) {
		read := ReadManifest
		if k%2 == 1 {
			read = openChunked(61)
		}
		m, err := read(filepath.Join(snaps, fmt.Sprint(i), "manifest"))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Check(context.Background(), m); err != nil {
			t.Fatalf("verify %d: %v", i, err)
		}
		_, ignoredBefore := splitIgnored(state(t, dir))
		if _, err := Restore(context.Background(), dir, "", RestoreOptions{spillAt: spill, Manifest: m}); err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
		got, ignoredAfter := splitIgnored(state(t, dir))
		if d := diffStates(states[i], got); d != "" {
			t.Fatalf("restore of layer %d differs:\n%s", i, d)
		}
		if d := diffStates(ignoredBefore, ignoredAfter); d != "" {
			t.Fatalf("restore of layer %d touched ignored files:\n%s", i, d)
		}
	}
}

// TestLayerHoldsOnlyWhatChanged: a layer's archive is a plain tar.gz with
// the changed files, whiteouts for what is gone and an opaque marker where a
// file became a folder; its manifest lists only the differences.
func TestLayerHoldsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	snaps := t.TempDir()
	files := map[string]string{"keep.txt": "keep", "edit.txt": "v1", "gone/a": "a", "gone/b": "b", "becomes-dir": "file"}
	for i := 0; i < 200; i++ {
		files[fmt.Sprintf("many/f%03d", i)] = strings.Repeat("x", i)
	}
	writeTree(t, dir, files)
	layerSave(t, dir, snaps, 0, 0)
	os.WriteFile(filepath.Join(dir, "edit.txt"), []byte("v2"), 0o644)
	os.RemoveAll(filepath.Join(dir, "gone"))
	os.Remove(filepath.Join(dir, "becomes-dir"))
	writeTree(t, dir, map[string]string{"becomes-dir/inner": "x"})
	res, _ := layerSave(t, dir, snaps, 1, 0)
	if !res.Layer || res.LayerFiles != 2 {
		t.Fatalf("layer holds %d files (layer %v), want 2", res.LayerFiles, res.Layer)
	}
	out, err := exec.Command("tar", "tzf", filepath.Join(snaps, "1", "snapshot.tar.gz")).CombinedOutput()
	if err != nil {
		t.Fatalf("tar tzf: %v %s", err, out)
	}
	for _, want := range []string{".wh.gone", "edit.txt", "becomes-dir/", "becomes-dir/.wh..wh..opq", "becomes-dir/inner"} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("tar tzf does not list %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "gone/a") || strings.Contains(string(out), "many/") {
		t.Errorf("layer holds unchanged or deleted content:\n%s", out)
	}
	full, _ := os.Stat(filepath.Join(snaps, "0", "manifest"))
	delta, _ := os.Stat(filepath.Join(snaps, "1", "manifest"))
	if delta.Size()*10 > full.Size() {
		t.Errorf("layer manifest is %d bytes, full one %d: it should hold only the changes", delta.Size(), full.Size())
	}
	// A layer's archive alone is refused: its parents hold the rest.
	if _, err := Restore(context.Background(), t.TempDir(), filepath.Join(snaps, "1", "snapshot.tar.gz"), RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "a layer over other snapshots") {
		t.Errorf("restoring a bare layer: %v", err)
	}
}

func TestChainDepthLimitWritesFull(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	snaps := t.TempDir()
	big := make([]byte, 64<<10)
	rand.New(rand.NewSource(1)).Read(big) // so the layers never outgrow the base
	writeTree(t, dir, map[string]string{"a": "0", "big": string(big)})
	layerSave(t, dir, snaps, 0, 2)
	for i := 1; i <= 3; i++ {
		os.WriteFile(filepath.Join(dir, "a"), []byte(fmt.Sprint(i)), 0o644)
		res, _ := layerSave(t, dir, snaps, i, 2)
		if want := i < 3; res.Layer != want {
			t.Errorf("snapshot %d: layer = %v, want %v (max depth 2)", i, res.Layer, want)
		}
	}
}

// TestRestoreAfterOneChangeFetchesOneFile: the manifest-driven restore reads
// only the file that differs.
func TestRestoreAfterOneChangeFetchesOneFile(t *testing.T) {
	t.Parallel()
	testRestoreAfterOneChangeFetchesOneFile(t, 0)
}

// testRestoreAfterOneChangeFetchesOneFile is
// TestRestoreAfterOneChangeFetchesOneFile, with the restore's plan written
// out spill entries a block (0: as in production; see
// TestRestoresWithThePlanSpilled).
func testRestoreAfterOneChangeFetchesOneFile(t *testing.T, spill int) {
	gitEnv(t)
	dir := t.TempDir()
	snaps := t.TempDir()
	genTree(t, rand.New(rand.NewSource(5)), dir, 200)
	_, m := layerSave(t, dir, snaps, 0, 0)
	os.WriteFile(filepath.Join(dir, "d0", "new.txt"), []byte("x"), 0o644)
	var victim string
	for _, e := range m.Entries {
		if e.Kind == KindFile && e.Size > 10 {
			victim = e.Path
			break
		}
	}
	f, _ := os.OpenFile(filepath.Join(dir, victim), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("changed")
	f.Close()
	res, err := Restore(context.Background(), dir, "", RestoreOptions{spillAt: spill, Manifest: m})
	if err != nil {
		t.Fatal(err)
	}
	if res.Written != 1 || res.Deleted != 1 {
		t.Errorf("written %d deleted %d, want 1 and 1", res.Written, res.Deleted)
	}
}

// TestDamagedManifestOrArchive: a manifest pointing at the wrong place, or
// content that does not hash right, stops the restore before it changes
// anything; so does a crafted manifest path.
func TestDamagedManifestOrArchive(t *testing.T) {
	t.Parallel()
	testDamagedManifestOrArchive(t, 0)
}

// testDamagedManifestOrArchive is TestDamagedManifestOrArchive, with the
// restore's plan written out spill entries a block (0: as in production; see
// TestRestoresWithThePlanSpilled).
func testDamagedManifestOrArchive(t *testing.T, spill int) {
	gitEnv(t)
	dir := t.TempDir()
	snaps := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "aaaa", "b.txt": "bbbb"})
	_, m := layerSave(t, dir, snaps, 0, 0)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("AAAA!"), 0o644)
	before := state(t, dir)
	for name, damage := range map[string]func(m *Manifest){
		"wrong offset": func(m *Manifest) { m.Entries[0].Skip += 512 },
		"wrong hash":   func(m *Manifest) { m.Entries[0].Hash = strings.Repeat("0", 64) },
		"escaping path": func(m *Manifest) {
			m.Entries[0].Path = "../evil"
		},
	} {
		c := *m
		c.Entries = append([]Entry(nil), m.Entries...)
		damage(&c)
		if _, err := Restore(context.Background(), dir, "", RestoreOptions{spillAt: spill, Manifest: &c}); err == nil {
			t.Errorf("%s: restore succeeded", name)
		}
		if d := diffStates(before, state(t, dir)); d != "" {
			t.Fatalf("%s: the tree changed:\n%s", name, d)
		}
	}
}

// TestReuseWritesNothingWhileMetadataHolds: with Reuse, an unchanged tree
// whose metadata all matches the parent's writes no archive and hands back
// the parent; a file touched with the same content, or a change, does not.
func TestReuseWritesNothingWhileMetadataHolds(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	snaps := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "aaaa", "sub/b.txt": "bbbb"})
	layerSave(t, dir, snaps, 0, 0)
	parent, err := ReadManifest(filepath.Join(snaps, "0", "manifest"))
	if err != nil {
		t.Fatal(err)
	}
	// As if scanned well after the files were written: none is racy.
	parent.Header.ScanStarted += 10 * racyWindow
	create := func() *Result {
		t.Helper()
		out := filepath.Join(t.TempDir(), "layer.tar.gz")
		res, err := createWalked(context.Background(), dir, CreateOptions{Out: out, Parent: parent, Layer: true, Reuse: true})
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(out)
		if wrote := statErr == nil; wrote == res.Reused {
			t.Fatalf("reused %v, archive written %v", res.Reused, wrote)
		}
		return res
	}
	if res := create(); !res.Unchanged || !res.Reused || res.Manifest != parent {
		t.Fatalf("unchanged tree: %+v, want the parent reused", res)
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "a.txt"), later, later)
	if res := create(); !res.Unchanged || res.Reused {
		t.Fatalf("touched file, same content: %+v, want unchanged and a new manifest", res)
	}
	os.WriteFile(filepath.Join(dir, "sub/b.txt"), []byte("BBBB"), 0o644)
	if res := create(); res.Unchanged || res.Reused || res.LayerFiles != 1 {
		t.Fatalf("changed file: %+v, want a layer of one file", res)
	}
}

// TestManifestNumbersRoundTrip: the hand-written number parsing reads what
// the writer writes at the edges (times before 1970, 64-bit inodes) and
// names the line of a bad number.
func TestManifestNumbersRoundTrip(t *testing.T) {
	t.Parallel()
	hash := strings.Repeat("ab", 32)
	m := newManifest([]Entry{
		{Path: "a", Kind: KindFile, Mode: 0o755, Size: 1<<63 - 1, MTime: -1_000_000_007, CTime: 0, Ino: 1<<64 - 1, Hash: hash, Src: "/x/y.tar.gz", COff: 1 << 40, Skip: 511},
		{Path: "b\tc", Kind: KindSymlink, Mode: 0o777, Size: 3, MTime: 1, Ino: 9, Link: "../t"},
		{Path: "d", Kind: KindDir, Mode: 0o700, MTime: 1795325539921237190, Ino: 12345678901234567890},
	}, 42)
	m.Header.Archive = "/x/y.tar.gz"
	name := filepath.Join(t.TempDir(), "manifest")
	if err := WriteManifestFile(name, m, nil); err != nil {
		t.Fatal(err)
	}
	got, err := ReadManifest(name)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Entries, m.Entries) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got.Entries, m.Entries)
	}
	b, _ := os.ReadFile(name)
	for _, bad := range []string{"18446744073709551616", "12a", "", "-", "+1"} {
		lines := strings.Split(string(b), "\n")
		f := strings.Split(lines[3], "\t")
		f[5] = bad // d's inode
		lines[3] = strings.Join(f, "\t")
		os.WriteFile(name, []byte(strings.Join(lines, "\n")), 0o644)
		if _, err := ReadManifest(name); err == nil || !strings.Contains(err.Error(), "line 4") {
			t.Errorf("inode %q: %v, want an error naming line 4", bad, err)
		}
	}
}

// TestReadManifestOverIsReadManifest reads every manifest of a chain of
// layers over random edits (adds, changes, deletions) both ways: laid over
// the one before it, and through its whole chain. They must be the same
// manifest, entries, files and recorded sizes alike; given a parent that is
// not its own, ReadManifestOver reads the chain.
func TestReadManifestOverIsReadManifest(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	rng := rand.New(rand.NewSource(23))
	dir := t.TempDir()
	snaps := t.TempDir()
	genTree(t, rng, dir, 120)
	var prev *Manifest
	for i := 0; i < 10; i++ {
		if i > 0 {
			mutate(t, rng, dir)
		}
		_, whole := layerSave(t, dir, snaps, i, 0)
		name := filepath.Join(snaps, fmt.Sprint(i), "manifest")
		over, err := ReadManifestOver(name, func(string) *Manifest { return prev })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(over, whole) {
			t.Fatalf("manifest %d laid over its parent differs from the one read through its chain:\n%+v\n%+v", i, over.Header, whole.Header)
		}
		if i >= 2 {
			other, err := ReadManifest(filepath.Join(snaps, "0", "manifest"))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := ReadManifestOver(name, func(string) *Manifest { return other }); err != nil || !reflect.DeepEqual(got, whole) {
				t.Fatalf("manifest %d over a manifest not its parent: %v", i, err)
			}
		}
		prev = over
	}
	if _, err := ReadManifestOver(filepath.Join(snaps, "0", "manifest"), nil); err != nil {
		t.Fatalf("a full manifest asks for no parent: %v", err)
	}
}

// TestReadAheadChecksAsCheckDoes: a Verifier reading a chain's archives
// ahead finds what one reading them as it goes finds — every layer right,
// and a damaged archive blamed — whoever gets to an archive first.
func TestReadAheadChecksAsCheckDoes(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	rng := rand.New(rand.NewSource(5))
	dir := t.TempDir()
	snaps := t.TempDir()
	genTree(t, rng, dir, 80)
	var archives []string
	const n = 8
	for i := 0; i < n; i++ {
		if i > 0 {
			mutate(t, rng, dir)
		}
		layerSave(t, dir, snaps, i, 0)
		archives = append(archives, filepath.Join(snaps, fmt.Sprint(i), "snapshot.tar.gz"))
	}
	check := func(ahead bool) []string {
		v := NewVerifier()
		if ahead {
			defer v.ReadAhead(context.Background(), archives, DefaultLimits)()
		}
		var out []string
		for i := 0; i < n; i++ {
			m, err := ReadManifest(filepath.Join(snaps, fmt.Sprint(i), "manifest"))
			if err == nil {
				err = v.Check(context.Background(), m)
			}
			out = append(out, fmt.Sprint(err))
		}
		return out
	}
	want := check(false)
	for i, e := range want {
		if e != "<nil>" {
			t.Fatalf("layer %d: %s", i, e)
		}
	}
	if got := check(true); !reflect.DeepEqual(got, want) {
		t.Fatalf("read ahead: %v, want %v", got, want)
	}
	b, _ := os.ReadFile(archives[3])
	b[len(b)/2] ^= 0xff
	os.WriteFile(archives[3], b, 0o644)
	want = check(false)
	if want[3] == "<nil>" {
		t.Fatal("a damaged archive checked right")
	}
	if got := check(true); !reflect.DeepEqual(got, want) {
		t.Fatalf("read ahead over a damaged archive: %v, want %v", got, want)
	}
}
