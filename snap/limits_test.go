package snap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveRefusesWhatRestoreWould: a tree past a limit is refused at save,
// naming the entry and the limit; a snapshot taken within raised limits
// records them, and its manifest restores it with no option given.
func TestSaveRefusesWhatRestoreWould(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	deep := strings.Repeat("d/", DefaultLimits.MaxDepth) + "f" // one element too deep
	for _, tc := range []struct {
		name, file, limit string
		limits            Limits
	}{
		{"too deep", deep, "max_depth", Limits{}},
		{"too long", strings.Repeat("x", 250) + "/" + strings.Repeat("y", 250), "max_path", Limits{MaxPath: 300}},
		{"too big", "big", "max_bytes", Limits{MaxBytes: 100}},
		{"too many", "a", "max_entries", Limits{MaxEntries: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{tc.file: strings.Repeat("z", 200), "b": "b"})
			out := filepath.Join(t.TempDir(), "s.tar.gz")
			_, err := createWalked(context.Background(), dir, CreateOptions{Out: out, Limits: tc.limits})
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != tc.limit {
				t.Fatalf("err = %v, want a %s refusal", err, tc.limit)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("an archive was written for a refused tree")
			}
		})
	}

	dir := t.TempDir()
	writeTree(t, dir, map[string]string{deep: "deep", "top": "top"})
	snaps := t.TempDir()
	raised := Limits{MaxDepth: 2 * DefaultLimits.MaxDepth}
	res, err := createWalked(context.Background(), dir, CreateOptions{Out: filepath.Join(snaps, "s.tar.gz"), Limits: raised})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteManifestFile(filepath.Join(snaps, "m"), res.Manifest, nil); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(filepath.Join(snaps, "m"))
	if err != nil {
		t.Fatal(err)
	}
	want := state(t, dir)
	os.RemoveAll(filepath.Join(dir, "d"))
	if _, err := Restore(context.Background(), dir, filepath.Join(snaps, "s.tar.gz"), RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Fatalf("restore --from with the default limits: %v, want a depth refusal", err)
	}
	if _, err := Restore(context.Background(), dir, "", RestoreOptions{Manifest: m}); err != nil {
		t.Fatalf("restore through the manifest that records the raised limits: %v", err)
	}
	if d := diffStates(want, state(t, dir)); d != "" {
		t.Fatalf("not restored exactly:\n%s", d)
	}
	if err := NewVerifier().Check(context.Background(), m); err != nil {
		t.Fatalf("verify: %v", err)
	}
}
