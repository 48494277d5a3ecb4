package snap

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestStateFoldersLeftAlone: a tree that holds Rewind's home and the agents'
// state folders (a project in HOME) never captures them, and a restore
// neither deletes nor writes them, even from a snapshot that holds them.
func TestStateFoldersLeftAlone(t *testing.T) {
	home := gitHome(t)
	elsewhere := filepath.Join(home, "work", "rw")
	t.Setenv("REWIND_HOME", elsewhere)
	t.Setenv("CODEX_HOME", filepath.Join(home, "codex-state"))
	state := []string{".rewind/storage/x/lock", ".claude/projects/p/s.jsonl", ".factory/sessions/s.jsonl",
		".codex/log", ".gemini/settings.json", ".copilot/session-state/e.jsonl", ".pi/agent/sessions/s.jsonl",
		".local/share/opencode/opencode.db", ".config/opencode/opencode.json", "work/rw/storage/y/lock", "codex-state/a"}
	files := map[string]string{"notes.txt": "mine", ".config/git/ignore": "", ".local/share/other/keep": "mine too"}
	for _, p := range state {
		files[p] = "state of " + p
	}
	writeTree(t, home, files)
	var captured []string
	for _, p := range walkFiles(t, home) {
		for _, s := range state {
			if p == s {
				captured = append(captured, p)
			}
		}
	}
	if len(captured) > 0 {
		t.Errorf("state files captured: %v", captured)
	}
	if got := walkFiles(t, home); !slices.Contains(got, ".local/share/other/keep") || !slices.Contains(got, "notes.txt") {
		t.Errorf("the user's own files are missing from the walk: %v", got)
	}

	// A snapshot of HOME as an older Rewind took it, state folders and all.
	snapDir := t.TempDir()
	all := map[string]string{"notes.txt": "old notes"}
	for _, p := range state {
		all[p] = "OLD " + p
	}
	src := filepath.Join(snapDir, "src")
	writeTree(t, src, all)
	archive := filepath.Join(snapDir, "s.tar.gz")
	t.Setenv("REWIND_HOME", filepath.Join(src, "no-such"))
	t.Setenv("HOME", filepath.Join(src, "no-such"))
	res, err := createWalked(context.Background(), src, CreateOptions{Out: archive})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteManifestFile(filepath.Join(snapDir, "m"), res.Manifest, nil); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(filepath.Join(snapDir, "m"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("REWIND_HOME", elsewhere)
	for name, opts := range map[string]RestoreOptions{"archive": {}, "manifest": {Manifest: m}} {
		t.Run(name, func(t *testing.T) {
			if _, err := Restore(context.Background(), home, archive, opts); err != nil {
				t.Fatal(err)
			}
			for _, p := range state {
				if b, err := os.ReadFile(filepath.Join(home, p)); err != nil || string(b) != "state of "+p {
					t.Errorf("%s: %q, %v: a restore touched a state folder", p, b, err)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(home, "notes.txt")); string(b) != "old notes" {
				t.Errorf("notes.txt = %q, want the snapshot's", b)
			}
			os.WriteFile(filepath.Join(home, "notes.txt"), []byte("mine"), 0o644)
		})
	}
}
