package snap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestPathListWrittenOut: a list past listHeld paths is written to a
// temporary file and read back as it was given, whatever its names hold;
// WriteJSON prints it as the held list's JSON would be (and a string
// around it that looks like its placeholder as it is); where no temporary
// file can be made the list is held.
func TestPathListWrittenOut(t *testing.T) {
	t.Parallel()
	names := []string{"a", `quote"d`, "new\nline", "<&>", "é/ü", "back\\slash", strings.Repeat("long/", 30000), "tab\there", "last"}

	for _, tmpdir := range []string{"writable", "none"} {
		tmp := t.TempDir()
		if tmpdir == "none" {
			tmp = filepath.Join(tmp, "none")
		}
		l := PathList{most: 3, dir: tmp}
		for _, n := range names {
			l.Add(n)
		}
		if got := slices.Collect(l.All()); l.Len() != len(names) || !slices.Equal(got, names) || l.Err() != nil {
			t.Fatalf("TMPDIR %s: %d paths %q (%v), want %q", tmpdir, l.Len(), got, l.Err(), names)
		}
		if written := l.spill != nil; written != (tmpdir == "writable") {
			t.Fatalf("TMPDIR %s: written out %v", tmpdir, written)
		}
		for range l.All() {
			break // (stopped part way, a list reads from its start again)
		}
		l.Add("after")
		if got := slices.Collect(l.All()); !slices.Equal(got, append(slices.Clone(names), "after")) {
			t.Fatalf("TMPDIR %s: added to after it was read: %q", tmpdir, got)
		}
		if left, _ := os.ReadDir(tmp); runtime.GOOS != "windows" && len(left) > 0 {
			t.Errorf("TMPDIR %s: the list's file is left to be seen: %v", tmpdir, left)
		}

		type lists struct {
			Long  PathList `json:"long,omitzero"`
			Short PathList `json:"short,omitzero"`
			None  PathList `json:"none,omitzero"`
			Other []string `json:"other"`
		}
		type plain struct {
			Long  []string `json:"long,omitempty"`
			Short []string `json:"short,omitempty"`
			None  []string `json:"none,omitempty"`
			Other []string `json:"other"`
		}
		v := lists{Long: l, Other: []string{"<x>", "\x00rewind-paths-1", "\x00rewind-paths-"}}
		v.Short.Add("<b>")
		var got, want bytes.Buffer
		if err := WriteJSON(&got, &v); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.Encode(plain{Long: append(slices.Clone(names), "after"), Short: []string{"<b>"}, Other: []string{"<x>", "\x00rewind-paths-1", "\x00rewind-paths-"}})
		if got.String() != want.String() {
			t.Fatalf("TMPDIR %s: WriteJSON\n%.300s\nwant\n%.300s", tmpdir, got.String(), want.String())
		}
		var back plain
		if err := json.Unmarshal(got.Bytes(), &back); err != nil || len(back.Long) != l.Len() {
			t.Fatalf("TMPDIR %s: the JSON does not read back: %v", tmpdir, err)
		}
		if err := l.Close(); err != nil || l.Len() != 0 {
			t.Fatalf("TMPDIR %s: closed: %v, %d paths", tmpdir, err, l.Len())
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("TMPDIR %s: closing left %v", tmpdir, left)
		}
	}
}

// TestRestoreListsWrittenOut: the lists of a restore (what it writes,
// deletes and changes the mode of), written out past listHeld, print as the
// held ones do, in a dry run and a restore, with its plan held or written
// out too; nothing is left in TMPDIR once the result is closed.
func TestRestoreListsWrittenOut(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d%d/f%d", i%3, i)] = fmt.Sprint(i)
	}
	snaps := t.TempDir()
	edit := func() string { // a tree like the snapshot's, edited every way
		dir := t.TempDir()
		writeTree(t, dir, files)
		if _, err := os.Stat(filepath.Join(snaps, "0", "manifest")); err != nil {
			layerSave(t, dir, snaps, 0, 0)
		}
		for i := range 30 {
			p := filepath.Join(dir, fmt.Sprintf("d%d/f%d", i%3, i))
			switch i % 3 {
			case 0:
				os.WriteFile(p, []byte("new"), 0o644)
			case 1:
				os.Chmod(p, 0o755)
			}
		}
		for i := range 12 {
			writeTree(t, dir, map[string]string{fmt.Sprintf("d0/added%d", i): "x", fmt.Sprintf("gone/g%d", i): "x"})
		}
		os.RemoveAll(filepath.Join(dir, "d2"))
		return dir
	}
	restore := func(dry bool, held, at int) string {
		tmp := t.TempDir()
		dir := edit()
		m, err := OpenManifest(filepath.Join(snaps, "0", "manifest"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Restore(context.Background(), dir, "", RestoreOptions{Manifest: m, DryRun: dry, spillAt: at, listHeld: held, tempDir: tmp})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := WriteJSON(&out, res); err != nil {
			t.Fatal(err)
		}
		if err := res.Close(); err != nil {
			t.Fatal(err)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("dry run %v, %d held, plan blocks of %d: left %v", dry, held, at, left)
		}
		return out.String()
	}
	for _, dry := range []bool{true, false} {
		want := restore(dry, 1<<20, 1<<30)
		for _, w := range []string{`"written_paths":["d0/f0"`, `"deleted_paths":["d0/added0","d0/added1"`, `"gone/"`} {
			if dry && !strings.Contains(want, w) {
				t.Fatalf("dry run: %s lacks %s", want, w)
			}
		}
		if !strings.Contains(want, `"mode_changed":10`) || !strings.Contains(want, `"deleted":24`) || !strings.Contains(want, `"folders_changed":2`) {
			t.Fatalf("dry run %v: %s", dry, want)
		}
		for _, held := range []int{1, 4} {
			for _, at := range []int{1 << 30, 2} {
				if got := restore(dry, held, at); got != want {
					t.Errorf("dry run %v, %d held, plan blocks of %d:\n%s\nwant\n%s", dry, held, at, got, want)
				}
			}
		}
	}
}
