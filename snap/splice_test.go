package snap

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/snap/gzmember"
)

// TestWriteFullOfLayerChain exports every snapshot of a deep layer chain
// over a tree of several gzip members with WriteFull: the base's members
// are copied, and the archive written extracts with the real tar, and
// restores, to exactly the snapshot's tree.
func TestWriteFullOfLayerChain(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("no tar")
	}
	rng := rand.New(rand.NewSource(21))
	dir := t.TempDir()
	snaps := t.TempDir()
	genTree(t, rng, dir, 1500) // random content: about 3 MiB, several members
	const n = 6
	states := make([]map[string]string, n)
	for i := 0; i < n; i++ {
		if i > 0 {
			mutate(t, rng, dir)
		}
		layerSave(t, dir, snaps, i, 0)
		states[i], _ = splitIgnored(state(t, dir))
	}
	base, err := os.ReadFile(filepath.Join(snaps, "0", "snapshot.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		m, err := ReadManifest(filepath.Join(snaps, fmt.Sprint(i), "manifest"))
		if err != nil {
			t.Fatal(err)
		}
		for _, redact := range []bool{false, true} {
			name := fmt.Sprintf("%d, redact %v", i, redact)
			want := states[i]
			keep := func(e *Entry) bool { return true }
			if redact {
				// Leave out one folder of the tree, as --redact would.
				keep = func(e *Entry) bool { return e.Path != "d1" && !strings.HasPrefix(e.Path, "d1/") }
				want = map[string]string{}
				for p, s := range states[i] {
					if p != "d1" && !strings.HasPrefix(p, "d1/") {
						want[p] = s
					}
				}
			}
			if i == 0 && !redact {
				continue // copied whole (copyWhole)
			}
			if i > 0 && redact != (i == n-1) {
				continue // redacted: the full one and the last layer
			}
			kept := make([]bool, len(m.Entries))
			for j := range m.Entries {
				kept[j] = keep(&m.Entries[j])
			}
			var buf bytes.Buffer
			files, ok, err := writeSpliced(context.Background(), &buf, m, kept, nil)
			if err != nil || !ok {
				t.Fatalf("%s: writeSpliced: ok %v, %v", name, ok, err)
			}
			// Opened with OpenManifest (read in passes, lines straddling
			// chunks), the manifest gives the same bytes.
			opened, err := OpenManifest(m.File)
			if err != nil {
				t.Fatal(err)
			}
			var again bytes.Buffer
			_, ok, err = writeSpliced(context.Background(), &again, chunked(opened, 61), kept, nil)
			if err != nil || !ok || !bytes.Equal(again.Bytes(), buf.Bytes()) {
				t.Fatalf("%s: writeSpliced of the opened manifest: ok %v, %v, %d bytes (read whole: %d)", name, ok, err, again.Len(), buf.Len())
			}
			nfiles := 0
			for p, s := range want {
				if strings.HasPrefix(s, "file ") && p != "" {
					nfiles++
				}
			}
			if files != nfiles {
				t.Errorf("%s: %d files written, want %d", name, files, nfiles)
			}
			// Most of the base's compressed bytes are in it as they are.
			if !redact && i < 3 && !bytes.Contains(buf.Bytes(), base[len(base)/3:len(base)/3+4096]) {
				t.Errorf("%s: the base's members were not copied", name)
			}
			out := filepath.Join(t.TempDir(), "tree.tar.gz")
			if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if kind, err := markOf(out); err != nil || kind != "full" {
				t.Fatalf("%s: mark %q, %v", name, kind, err)
			}
			x := t.TempDir()
			if b, err := exec.Command("tar", "-xpzf", out, "-C", x).CombinedOutput(); err != nil {
				t.Fatalf("%s: tar xzf: %v\n%s", name, err, b)
			}
			if d := diffStates(want, state(t, x)); d != "" {
				t.Fatalf("%s: tar xzf of the export differs from the snapshot:\n%s", name, d)
			}
			r := t.TempDir()
			if _, err := Restore(context.Background(), r, out, RestoreOptions{}); err != nil {
				t.Fatalf("%s: restore: %v", name, err)
			}
			if d := diffStates(want, state(t, r)); d != "" {
				t.Fatalf("%s: restore of the export differs from the snapshot:\n%s", name, d)
			}
		}
	}
}

// TestWriteFullRewrites exports a full snapshot and a layer of a chain
// with some files' content changed in place (as --redact masks secrets):
// the changed files are written, not copied, and the archive restores to
// the tree with them changed, every other file as it was.
func TestWriteFullRewrites(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	rng := rand.New(rand.NewSource(5))
	dir, snaps := t.TempDir(), t.TempDir()
	genTree(t, rng, dir, 400)
	const n = 3
	states := make([]map[string]string, n)
	for i := 0; i < n; i++ {
		if i > 0 {
			mutate(t, rng, dir)
		}
		layerSave(t, dir, snaps, i, 0)
		states[i], _ = splitIgnored(state(t, dir))
	}
	chosen := func(p string) bool { return len(p)%3 == 0 }
	upper := func(b []byte) {
		for i, c := range b {
			if 'a' <= c && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
		}
	}
	for _, i := range []int{0, n - 1} {
		m, err := OpenManifest(filepath.Join(snaps, fmt.Sprint(i), "manifest"))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		changed := 0
		for p, s := range states[i] {
			if rest, ok := strings.CutPrefix(s, "file "); ok && chosen(p) {
				mode, content, _ := strings.Cut(rest, " ")
				b := []byte(content)
				upper(b)
				s = "file " + mode + " " + string(b)
				changed++
			}
			want[p] = s
		}
		if changed == 0 {
			t.Fatal("no file chosen")
		}
		var buf bytes.Buffer
		_, err = WriteFull(context.Background(), &buf, m, WriteOptions{Rewrite: func(e *Entry) func([]byte) {
			if chosen(e.Path) {
				return upper
			}
			return nil
		}})
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		out := filepath.Join(t.TempDir(), "tree.tar.gz")
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		r := t.TempDir()
		if _, err := Restore(context.Background(), r, out, RestoreOptions{}); err != nil {
			t.Fatalf("snapshot %d: restore: %v", i, err)
		}
		if d := diffStates(want, state(t, r)); d != "" {
			t.Fatalf("snapshot %d: the restore differs:\n%s", i, d)
		}
	}
}

// TestExportReadsAnArchiveOutOfWalkOrder: an export reads each archive it
// takes files from in walk order, without a map of every path; an archive
// that is not in that order (not one Rewind wrote) is not refused but read
// no further, its files fetched from their own members, each checked
// against its hash.
func TestExportReadsAnArchiveOutOfWalkOrder(t *testing.T) {
	t.Parallel()
	files := []struct{ path, data string }{{"b", "bee\n"}, {"a", "ay\n"}, {"c", "sea\n"}}
	name := archiveOf(t, "b", "bee\n", "a", "ay\n", "c", "sea\n")
	var entries []Entry // with their places, as a manifest records them
	as, err := openArchiveMembers(name, DefaultLimits, Folding{}, false)
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, content, err := as.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(content)
		sum := sha256.Sum256(b)
		e.Hash, e.Src = hex.EncodeToString(sum[:]), name
		entries = append(entries, *e)
	}
	as.Close()
	seq, fetch := map[string]*seqArchive{}, newFetcher()
	defer fetch.close()
	for i := range entries {
		e := &entries[i]
		r, err := contentOf(e, seq, fetch, DefaultLimits)
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		b, err := io.ReadAll(r)
		if err != nil || string(b) != files[i].data {
			t.Fatalf("%s: %q, %v; want %q", e.Path, b, err, files[i].data)
		}
	}
	for _, s := range seq {
		if !s.done {
			t.Fatal("an archive out of walk order was read through")
		}
		s.close()
	}
}

// TestListOutOfWalkOrder lists an archive in walk order and one that is
// not (read again with a map of every path, past what was listed): each
// entry once, in archive order; a duplicate is refused either way.
func TestListOutOfWalkOrder(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{"a", "1", "b", "2", "c", "3"}, "a b c"},
		{[]string{"b", "1", "a", "2", "c", "3", "d/e", "4"}, "b a c d/e"},
		{[]string{"b", "1", "a", "2", "b", "3"}, "duplicate entry"},
		{[]string{"a", "1", "a", "2"}, "duplicate entry"},
	} {
		var got []string
		err := List(archiveOf(t, c.files...), func(e *Entry) error { got = append(got, e.Path); return nil })
		if s := strings.Join(got, " "); err == nil && s != c.want || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: listed %q, %v; want %q", c.files, s, err, c.want)
		}
	}
}

// archiveOf writes a full snapshot's archive (marked as Rewind marks one)
// of the files given as path, content, ... in that order, and returns its
// name.
func archiveOf(t *testing.T, files ...string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "a.tar.gz")
	var buf bytes.Buffer
	mw := gzmember.NewWriter(&buf, 1, archiveMark(false))
	tw := tar.NewWriter(mw)
	for i := 0; i+1 < len(files); i += 2 {
		tw.WriteHeader(&tar.Header{Name: files[i], Mode: 0o644, Size: int64(len(files[i+1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[i+1]))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}
