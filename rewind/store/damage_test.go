package store

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"rewind.dev/internal/layout"
)

// chainStore makes a project whose store holds a chain of checkpoints —
// a full snapshot, then layers that add, edit and delete files — each with
// a transcript that grows from the one before, and returns the tree each
// checkpoint holds.
func chainStore(t *testing.T) (*Store, map[string]string) {
	t.Helper()
	s := project(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl")
	data := fixtureBytes(t)
	ts := turns(t, fixture)
	trees := map[string]string{}
	steps := []func(){
		func() { write(t, s.Project, "keep.txt", incompressible(64<<10)); write(t, s.Project, "edit.txt", "v1") },
		func() { write(t, s.Project, "new.txt", "new"); write(t, s.Project, "sub/deep.txt", "deep") },
		func() { write(t, s.Project, "edit.txt", "v2"); os.Remove(filepath.Join(s.Project, "new.txt")) },
		func() { write(t, s.Project, "edit.txt", "v3") },
	}
	for i, step := range steps {
		step()
		os.WriteFile(tp, data[:ts[min(i+1, len(ts)-1)].PromptOffset], 0o644)
		c := save(t, s, SaveOptions{TranscriptPath: tp, Agent: "claude"})
		trees[c.ID] = treeState(t, s.Project)
	}
	return s, trees
}

// incompressible is n bytes no compressor shrinks: a full snapshot larger
// than the layers over it, so they stay layers.
func incompressible(n int) string {
	b := make([]byte, n)
	x := uint32(1)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return string(b)
}

// treeState is the project's files and folders (the store and .git left
// out), with kinds, modes and contents.
func treeState(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" || rel == ".agent" {
			return filepath.SkipDir
		}
		fi, _ := d.Info()
		data, _ := os.ReadFile(p)
		if d.IsDir() {
			data = nil
		}
		fmt.Fprintf(&b, "%s %v %x\n", rel, fi.Mode(), sha256.Sum256(data))
		return nil
	})
	return b.String()
}

// storeFiles lists the files of a store that checkpoints are read from.
func storeFiles(s *Store) []string {
	var out []string
	for _, dir := range []string{s.checkpointsDir(), s.layersDir()} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				out = append(out, p)
			}
			return nil
		})
	}
	sort.Strings(out)
	return out
}

// damages are the ways a file of the store breaks.
var damages = map[string]func(p string){
	"removed": func(p string) { os.Remove(p) },
	"truncated": func(p string) {
		b, _ := os.ReadFile(p)
		os.WriteFile(p, b[:len(b)/2], 0o644)
	},
	"a flipped byte": func(p string) {
		b, _ := os.ReadFile(p)
		b[len(b)/2] ^= 0x40
		os.WriteFile(p, b, 0o644)
	},
	"garbage": func(p string) {
		b, _ := os.ReadFile(p)
		for i := range b {
			b[i] = byte(i*7 + 3)
		}
		os.WriteFile(p, b, 0o644)
	},
}

// cloneStore copies the project and its store to a new folder.
func cloneStore(t *testing.T, s *Store) *Store {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "p")
	if out, err := exec.Command("cp", "-a", s.Project, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return &Store{Dir: filepath.Join(dst, layout.ProjectStore), Project: dst, Mode: s.Mode, Homes: s.Homes}
}

// restoresWhole reports whether checkpoint id of s restores — tree and
// conversation — into an empty project, giving the tree it holds. The
// restore's backup goes into s's store.
func restoresWhole(t *testing.T, s *Store, id, want string) error {
	t.Helper()
	empty := t.TempDir()
	c := &Store{Dir: s.Dir, Project: empty, Mode: s.Mode, LockWait: s.LockWait, Homes: s.Homes} // s's store, restoring elsewhere
	cp, err := c.Load(id)
	if err != nil {
		return err
	}
	opts := RestoreOptions{Code: true}
	if cp.Transcript != nil && cp.Transcript.Snapshot != "" {
		opts.Context = "fork"
	}
	if _, err := c.Restore(ctx, cp, opts); err != nil {
		return err
	}
	if got := treeState(t, empty); got != want {
		return fmt.Errorf("restored a different tree:\n%s\nwant:\n%s", got, want)
	}
	return nil
}

// TestValidateAndRestoreAgree damages each file of a chain in turn, in
// each way: a checkpoint validate calls healthy restores whole, and one it
// flags is refused before anything changes; a save after the damage builds
// on nothing damaged, and restores.
func TestValidateAndRestoreAgree(t *testing.T) {
	t.Parallel()
	base, trees := chainStore(t)
	files := storeFiles(base)
	kinds := []string{"removed", "truncated", "a flipped byte", "garbage"}
	for i, f := range files {
		rel, _ := filepath.Rel(base.Dir, f)
		// One way per file here; the reliability suite tries every way.
		for _, kind := range []string{kinds[i%len(kinds)]} {
			t.Run(rel+"/"+kind, func(t *testing.T) {
				s := cloneStore(t, base)
				damages[kind](filepath.Join(s.Dir, rel))
				probs, _, err := s.Validate(ctx)
				if err != nil {
					t.Fatal(err)
				}
				flagged := map[string]string{}
				for _, p := range probs {
					flagged[p.What] = p.Issue
				}
				for id, tree := range trees {
					err := restoresWhole(t, s, id, tree) // refused ones change nothing
					switch issue, bad := flagged[id]; {
					case bad && err == nil:
						t.Errorf("validate flags %s (%s), yet it restores", id, issue)
					case !bad && err != nil:
						t.Errorf("validate calls %s healthy, yet it does not restore: %v", id, err)
					}
				}
				// A save after the damage restores, whatever it built on.
				write(t, s.Project, "after.txt", "after the damage")
				c, err := s.Save(ctx, SaveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := restoresWhole(t, s, c.ID, treeState(t, s.Project)); err != nil {
					t.Errorf("the save after the damage does not restore: %v (full because: %q)", err, c.Snapshot.FullBecause)
				}
			})
		}
	}
}

// TestSavesNeverBuildOnADamagedChain is the issue's case: with one layer
// archive missing, a restore's backup and later saves are full snapshots
// that restore, undo-restore brings the user's newer file back, and
// save --full on an unchanged tree writes a full snapshot of its own.
func TestSavesNeverBuildOnADamagedChain(t *testing.T) {
	t.Parallel()
	s, _ := chainStore(t)
	cps, _, _ := s.List()
	os.Remove(filepath.Join(s.layersDir(), cps[2].ID+".tar.gz")) // a layer in the middle, which sub/deep.txt is read from
	write(t, s.Project, "newer.txt", "the user's newer file")
	now := treeState(t, s.Project)
	oldest := cps[len(cps)-1]
	if _, err := s.Restore(ctx, oldest, RestoreOptions{Code: true}); err != nil {
		t.Fatalf("restoring the intact base: %v", err)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatalf("undo-restore: %v", err)
	}
	if got := treeState(t, s.Project); got != now {
		t.Fatalf("undo-restore did not bring the tree back:\n%s\nwant:\n%s", got, now)
	}
	full, err := s.Save(ctx, SaveOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if full.Snapshot.Layer || full.Snapshot.ReusedFrom != "" || full.Snapshot.CompressedBytes == 0 {
		t.Fatalf("save --full on an unchanged tree: %+v, want a full snapshot of its own", full.Snapshot)
	}
	if _, err := os.Stat(filepath.Join(s.layersDir(), full.ID+".tar.gz")); err != nil {
		t.Fatalf("save --full wrote no archive of its own: %v", err)
	}
	if err := restoresWhole(t, s, full.ID, now); err != nil {
		t.Fatalf("the full snapshot does not restore: %v", err)
	}
}
