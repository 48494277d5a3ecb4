package snap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckArchivesSeesMissingAndShortArchives: the cheap check a save
// runs before it layers on a chain finds a missing or truncated archive
// anywhere in the chain, also through a manifest rewritten in full (as gc
// rewrites one whose parent it deletes).
func TestCheckArchivesSeesMissingAndShortArchives(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	snaps := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": strings.Repeat("a", 5000), "b.txt": "b"})
	layerSave(t, dir, snaps, 0, 0)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("B"), 0o644)
	layerSave(t, dir, snaps, 1, 0)
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("c"), 0o644)
	_, m := layerSave(t, dir, snaps, 2, 0)
	if err := m.CheckArchives(); err != nil {
		t.Fatalf("an intact chain: %v", err)
	}
	// A manifest rewritten in full keeps the sizes of the archives it reads.
	full := filepath.Join(snaps, "full-manifest")
	m.Header.Parent = ""
	if err := WriteManifestFile(full, m, nil); err != nil {
		t.Fatal(err)
	}
	for _, manifest := range []string{filepath.Join(snaps, "2", "manifest"), full} {
		for name, damage := range map[string]func(p string){
			"removed":   func(p string) { os.Remove(p) },
			"truncated": func(p string) { b, _ := os.ReadFile(p); os.WriteFile(p, b[:len(b)-10], 0o644) },
			"grown":     func(p string) { f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0); f.Write([]byte("junk")); f.Close() },
		} {
			base := filepath.Join(snaps, "0", "snapshot.tar.gz")
			orig, _ := os.ReadFile(base)
			damage(base)
			m, err := ReadManifest(manifest)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.CheckArchives(); err == nil || !strings.Contains(err.Error(), base) {
				t.Errorf("%s, base archive %s: %v, want an error naming it", filepath.Base(filepath.Dir(manifest)), name, err)
			}
			os.WriteFile(base, orig, 0o644)
		}
	}
}
