package store

import (
	"os"
	"path/filepath"
	"testing"

	"rewind.dev/rewind/store/bundle"
)

// FuzzOpenBundle reads any bytes as an export archive (bundle.Open): it never panics, never
// leaves its temporary folder behind, and an archive it takes has passed every check (so it
// holds its tree and names only what its grammar allows, and the folder Import would make of
// it is one). Seeds: the hostile corpus and a valid archive, whose builder is this package's.
func FuzzOpenBundle(f *testing.F) {
	f.Add(baseParts(f).build(f))
	seeds, _ := filepath.Glob(filepath.Join("testdata", "hostile-bundles", "*.tar"))
	for _, s := range seeds {
		// (Not the one that inflates to 32 MiB: under the fuzzer's instrumentation one run of
		// it takes minutes.)
		if b, err := os.ReadFile(s); err == nil && len(b) < 32<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		name := filepath.Join(t.TempDir(), "x.tar")
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := bundle.Open(ctx, name)
		if err == nil {
			if !isID(b.Info.Checkpoint) || b.Info.Checkpoint != b.Checkpoint.ID {
				t.Errorf("took an archive of checkpoint %q (metadata %q)", b.Info.Checkpoint, b.Checkpoint.ID)
			}
			if _, err := os.Stat(b.Tree); err != nil {
				t.Errorf("took an archive without its tree: %v", err)
			}
			if importFolder(b.Info) == "" || !filepath.IsLocal(importFolder(b.Info)) {
				t.Errorf("import folder %q", importFolder(b.Info))
			}
			b.Close()
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("left %d entries in the temporary folder (err %v)", len(left), err)
		}
	})
}
