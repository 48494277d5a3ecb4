package foldtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"rewind.dev/snap/foldtest"
)

// The mounted file system folds as APFS does: one file under every
// spelling, listed as created, renamed to another case in place.
func TestFolds(t *testing.T) {
	t.Parallel()
	dir := foldtest.Dir(t)
	if err := os.WriteFile(filepath.Join(dir, "Readme.md"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"README.md", "readme.MD", "Readme.md"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != "a" {
			t.Fatalf("read %s: %q, %v", name, b, err)
		}
	}
	// Written under another spelling: the same file, its spelling kept.
	if err := os.WriteFile(filepath.Join(dir, "README.MD"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 1 || got[0] != "Readme.md" {
		t.Fatalf("listed %q, want [Readme.md]", got)
	}
	a, _ := os.Lstat(filepath.Join(dir, "Readme.md"))
	b, _ := os.Lstat(filepath.Join(dir, "README.md"))
	if !os.SameFile(a, b) {
		t.Fatal("two spellings are not one file")
	}
	if err := os.Rename(filepath.Join(dir, "Readme.md"), filepath.Join(dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 1 || got[0] != "README.md" {
		t.Fatalf("after a rename listed %q, want [README.md]", got)
	}
	// Normalisation: é composed (NFC) and decomposed (NFD) are one name.
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	if err := os.Mkdir(filepath.Join(dir, nfd), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, nfc, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, nfc), 0o755); !os.IsExist(err) {
		t.Fatalf("mkdir of the other form: %v, want it to exist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, nfd, "X")); err != nil {
		t.Fatal(err)
	}
	// A folder renamed to another case keeps its children.
	if err := os.Rename(filepath.Join(dir, nfc), filepath.Join(dir, "CAF\u00c9")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "CAF\u00c9", "x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "readme.md")); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 1 || got[0] != "CAF\u00c9" {
		t.Fatalf("listed %q, want [CAFÉ]", got)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}
