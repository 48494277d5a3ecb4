package snap

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFullOfLayerChain exports every snapshot of a deep layer chain
// over a tree of several gzip members with WriteFull: the base's members
// are copied, and the archive written extracts with the real tar, and
// restores, to exactly the snapshot's tree.
func TestWriteFullOfLayerChain(t *testing.T) {
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
			files, ok, err := writeSpliced(context.Background(), &buf, m, kept)
			if err != nil || !ok {
				t.Fatalf("%s: writeSpliced: ok %v, %v", name, ok, err)
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
