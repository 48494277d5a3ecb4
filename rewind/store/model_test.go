package store

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"rewind.dev/internal/layout"
)

// A model of a store as its user sees it: the checkpoints list shows, each
// with its tree, and beside them the restores' backups, which list does not
// show, and the restore history undo-restore and redo follow. Random runs of
// saves, restores, undos, undo-restores, redos, backs, reverts, pins, gc
// --keep N and retention are made on a store and on the model, and after
// each step the store must be what the model says.

// modelCP is a checkpoint as the model knows it.
type modelCP struct {
	id     string
	backup bool
	pinned bool
	tree   map[string]string // file path → content
}

// modelEntry is a restore-history entry as the model knows it.
type modelEntry struct {
	kind   RestoreKind
	backup string
	code   bool              // it changed the tree: reverting it puts back before
	before map[string]string // the tree it replaced
	undone bool
	gone   bool // gc deleted its backup
}

type storeModel struct {
	cps     []*modelCP // every checkpoint, oldest first
	entries []*modelEntry
	tree    map[string]string // the project's
}

// shown is what list shows, newest first (@0 first).
func (m *storeModel) shown() []*modelCP {
	var out []*modelCP
	for i := len(m.cps) - 1; i >= 0; i-- {
		if !m.cps[i].backup {
			out = append(out, m.cps[i])
		}
	}
	return out
}

func (m *storeModel) find(id string) *modelCP {
	for _, c := range m.cps {
		if c.id == id {
			return c
		}
	}
	return nil
}

// history is the model's entries as the store's restore history, for the
// rules undo-restore and redo follow.
func (m *storeModel) history() History {
	var h History
	for _, e := range m.entries {
		he := HistoryEntry{ID: e.backup, Kind: e.kind, BackupCheckpoint: e.backup}
		if e.undone {
			he.UndoneBy = "someone"
		}
		h.Entries = append(h.Entries, he)
	}
	return h
}

// changed records a change that took a backup: the backup holds the tree
// as it was, and the history an entry.
func (m *storeModel) changed(kind RestoreKind, backup string, code bool, tree map[string]string) {
	m.cps = append(m.cps, &modelCP{id: backup, backup: true, tree: m.tree})
	m.entries = append(m.entries, &modelEntry{kind: kind, backup: backup, code: code, before: m.tree})
	if code {
		m.tree = tree
	}
}

// gc is what gc --keep keep (or retention with max_checkpoints keep) leaves:
// the newest keep checkpoints list shows, the backups taken since the
// oldest of them, pinned ones, the newest, and the backups some run of
// reach undo-restores and redos restores from. It returns the ids deleted.
func (m *storeModel) gc(keep, reach int) []string {
	needed := reachByTrying(m.history(), reach)
	var left []*modelCP
	var gone []string
	newer := 0 // shown checkpoints newer than the one looked at
	for i := len(m.cps) - 1; i >= 0; i-- {
		c := m.cps[i]
		if c.pinned || i == len(m.cps)-1 || newer < keep || c.backup && needed[c.id] {
			left = append(left, c)
		} else {
			gone = append(gone, c.id)
		}
		if !c.backup {
			newer++
		}
	}
	slices.Reverse(left)
	m.cps = left
	for _, e := range m.entries {
		e.gone = e.gone || slices.Contains(gone, e.backup)
	}
	slices.Sort(gone)
	return gone
}

// revert is what revert @n does to the tree: the step is from the nth
// checkpoint list shows to the one above it (the tree now for @0); a path
// the step changed goes back where the tree still has it as the step left
// it, stays where the tree has it as before the step, and conflicts
// otherwise. It returns the tree after, whether anything changes, and
// whether it conflicts (then nothing does).
func (m *storeModel) revert(n int) (tree map[string]string, changes, conflicts bool) {
	shown := m.shown()
	before, after := shown[n].tree, m.tree
	if n > 0 {
		after = shown[n-1].tree
	}
	tree = maps.Clone(m.tree)
	for _, p := range slices.Sorted(maps.Keys(union(before, after))) {
		b, a, now := before[p], after[p], m.tree[p]
		switch {
		case a == b, now == b:
		case now == a:
			changes = true
			if b == "" {
				delete(tree, p)
			} else {
				tree[p] = b
			}
		default:
			conflicts = true
		}
	}
	return tree, changes, conflicts
}

func union(a, b map[string]string) map[string]string {
	u := maps.Clone(a)
	maps.Copy(u, b)
	return u
}

// undoTarget and redoTarget are the entries undo-restore and redo revert
// (-1: none), by the store's own rules.
func (m *storeModel) undoTarget() int { h := m.history(); return h.undoTarget() }
func (m *storeModel) redoTarget() int { h := m.history(); return h.redoTarget() }

// modelPaths are the files the random edits write and delete.
var modelPaths = []string{"main.go", "a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g/h.txt"}

// treeOf reads the files of a project tree (not .git nor the store); every
// folder in it must hold a file, as the edits leave none empty.
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".git" || rel == ".agent":
			return filepath.SkipDir
		case rel == ".":
		case d.IsDir():
			dirs = append(dirs, rel)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(files)), func(f string) bool { return strings.HasPrefix(f, d+"/") }) {
			t.Fatalf("the folder %s holds no file", d)
		}
	}
	return files
}

// edit changes a few files of the project, and the model's tree alike: a
// file deleted takes its folders with it when they are left empty.
func (m *storeModel) edit(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	m.tree = maps.Clone(m.tree)
	for range 1 + rng.Intn(3) {
		p := modelPaths[rng.Intn(len(modelPaths))]
		if _, ok := m.tree[p]; ok && rng.Intn(3) == 0 {
			if err := os.Remove(filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
			for d := path.Dir(p); d != "."; d = path.Dir(d) {
				os.Remove(filepath.Join(dir, d)) // (only when empty)
			}
			delete(m.tree, p)
			continue
		}
		v := fmt.Sprintf("v%d\n", rng.Intn(4))
		write(t, dir, p, v)
		m.tree[p] = v
	}
}

// TestStoreAgainstModel runs random steps on a store and on the model, with
// seeds fixed, and checks after each: the store holds exactly the
// checkpoints the model does (list, @N and the backups), the project's tree
// is the model's, the restore history reverts what the model's does, and
// after gc or retention every checkpoint left restores its exact tree.
func TestStoreAgainstModel(t *testing.T) {
	steps := 50
	if testing.Short() {
		steps = 25
	}
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			runModel(t, rand.New(rand.NewSource(seed)), steps)
		})
	}
}

func runModel(t *testing.T, rng *rand.Rand, steps int) {
	s := envProject(t)
	tp := agentTranscript(t, "1cbbde27-5fcc-4652-9047-4142f5f1912c.jsonl")
	data := fixtureBytes(t)
	ts := turns(t, fixture)
	prompts := 1 // the transcript holds this many prompts (then all of it)
	os.WriteFile(tp, data[:ts[prompts].PromptOffset], 0o644)
	m := &storeModel{tree: treeOf(t, s.Project)}
	var log []string // what was done, for a failure's message
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nafter:\n  %s", fmt.Sprintf(format, args...), strings.Join(log, "\n  "))
	}
	saveOne := func() {
		c := save(t, s, SaveOptions{TranscriptPath: tp})
		m.cps = append(m.cps, &modelCP{id: c.ID, tree: m.tree})
		log = append(log, "save "+c.ID)
	}
	saveOne()
	for range steps {
		var gcd bool // gc or retention ran: check what it left restores
		switch op := rng.Intn(20); {
		case op < 5:
			m.edit(t, rng, s.Project)
			saveOne()
		case op < 6:
			m.edit(t, rng, s.Project)
			log = append(log, "edit")
		case op < 8:
			n := rng.Intn(len(m.shown()))
			c, err := s.Resolve(fmt.Sprint("@", n))
			if err != nil || c.ID != m.shown()[n].id {
				fail("@%d is %v (%v), want %s", n, c, err, m.shown()[n].id)
			}
			res, err := s.Restore(ctx, c, RestoreOptions{Code: true})
			if err != nil {
				fail("restore @%d: %v", n, err)
			}
			// One that would change nothing takes no backup and records nothing.
			if same := maps.Equal(m.tree, m.shown()[n].tree); res.Nothing != same || res.Nothing == (res.Backup != "") {
				fail("restore @%d: nothing to restore %v, backup %q; the tree is the checkpoint's: %v", n, res.Nothing, res.Backup, same)
			}
			if res.Nothing {
				log = append(log, fmt.Sprintf("restore @%d (%s): nothing to restore", n, c.ID))
				break
			}
			m.changed(KindRestore, res.Backup, true, m.shown()[n].tree)
			log = append(log, fmt.Sprintf("restore @%d (%s), backup %s", n, c.ID, res.Backup))
		case op < 9:
			shown := m.shown()
			var want *modelCP
			switch {
			case !maps.Equal(m.tree, shown[0].tree):
				want = shown[0]
			case len(shown) > 1:
				want = shown[1]
			}
			res, err := s.Undo(ctx, false)
			if want == nil {
				if !errors.Is(err, ErrNothingToUndo) {
					fail("undo with nothing to undo: %v", err)
				}
				break
			}
			if err != nil || res.Checkpoint != want.id {
				fail("undo: %+v %v, want a restore to %s", res, err, want.id)
			}
			m.changed(KindUndo, res.Backup, true, want.tree)
			log = append(log, fmt.Sprintf("undo to %s, backup %s", want.id, res.Backup))
		case op < 12:
			redo := op == 11
			for range 1 + rng.Intn(3) {
				i, kind := m.undoTarget(), KindUndoRestore
				if redo {
					i, kind = m.redoTarget(), KindRedo
				}
				undo := s.UndoRestore
				if redo {
					undo = s.Redo
				}
				res, err := undo(ctx, UndoRestoreOptions{})
				if i < 0 || m.entries[i].gone {
					if err == nil {
						fail("%s: done, want none (target %d)", kind, i)
					}
					log = append(log, fmt.Sprintf("%s: none (%v)", kind, err))
					break
				}
				if err != nil {
					fail("%s of %s: %v", kind, m.entries[i].backup, err)
				}
				e := m.entries[i]
				if res.Entry != e.backup {
					fail("%s reverted %s, want %s", kind, res.Entry, e.backup)
				}
				m.changed(kind, res.Backup, e.code, e.before)
				e.undone = true
				log = append(log, fmt.Sprintf("%s of %s, backup %s", kind, e.backup, res.Backup))
			}
		case op < 13:
			both := rng.Intn(2) == 0
			res, err := s.Back(ctx, BackOptions{N: 1, Both: both, TranscriptPath: tp})
			var none *NoCheckpointBeforeError
			if errors.As(err, &none) {
				log = append(log, "back --both: no checkpoint before")
				break
			}
			if err != nil {
				fail("back (both %v): %v", both, err)
			}
			tree := m.tree
			if both {
				c := m.find(res.Checkpoint)
				if c == nil || c.backup {
					fail("back --both went to %s: %+v, not a checkpoint list shows", res.Checkpoint, c)
				}
				tree = c.tree
			}
			m.changed(KindBack, res.Backup, both, tree)
			log = append(log, fmt.Sprintf("back (both %v, to %s), backup %s", both, res.Checkpoint, res.Backup))
		case op < 14:
			// (a reach shorter than UndoReach, at times: so that the
			// backups out of it go, and undo-restore meets one gone)
			keep, reach := 1+rng.Intn(4), []int{1, 2, 3, UndoReach}[rng.Intn(4)]
			res, err := s.GC(ctx, GCOptions{Keep: keep, UndoReach: reach})
			if err != nil {
				fail("gc --keep %d: %v", keep, err)
			}
			slices.Sort(res.Removed)
			want := m.gc(keep, reach)
			log = append(log, fmt.Sprintf("gc --keep %d, reach %d: removed %v", keep, reach, res.Removed))
			if !slices.Equal(res.Removed, want) {
				fail("gc --keep %d (reach %d) removed %v, want %v", keep, reach, res.Removed, want)
			}
			gcd = true
		case op < 15:
			keep := 1 + rng.Intn(4)
			cfg := fmt.Sprintf(`{"version":1,"retention":{"max_checkpoints":%d}}`, keep)
			if err := os.WriteFile(filepath.Join(s.Dir, layout.ConfigFile), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			how := "from the index"
			if rng.Intn(3) == 0 {
				how = "reading the store"
				if err := s.dropIndex(); err != nil {
					t.Fatal(err)
				}
			}
			hook := &Store{Dir: s.Dir, Project: s.Project, Mode: s.Mode, Homes: s.Homes} // (a hook's process reads the config anew)
			l, err := hook.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			res, err := hook.ApplyRetention(ctx, time.Minute, time.Now())
			l.Unlock()
			if err != nil {
				fail("retention: %v", err)
			}
			slices.Sort(res.Removed)
			want := m.gc(keep, UndoReach)
			log = append(log, fmt.Sprintf("retention %d, %s: removed %v", keep, how, res.Removed))
			if !slices.Equal(res.Removed, want) {
				fail("retention (max_checkpoints %d, %s) removed %v, want %v", keep, how, res.Removed, want)
			}
			gcd = true
		case op < 18:
			n := rng.Intn(len(m.shown()))
			c, err := s.Resolve(fmt.Sprint("@", n))
			if err != nil {
				fail("@%d: %v", n, err)
			}
			tree, changes, conflicts := m.revert(n)
			res, err := s.Revert(ctx, c, RevertOptions{})
			var ce *ConflictError
			switch {
			case conflicts:
				if !errors.As(err, &ce) || res == nil || res.Backup != "" {
					fail("revert @%d: %+v %v, want a conflict and nothing changed", n, res, err)
				}
			case err != nil:
				fail("revert @%d: %v", n, err)
			case !changes && res.Backup != "":
				fail("revert @%d changed the tree (backup %s), want nothing to change", n, res.Backup)
			case changes && res.Backup == "":
				fail("revert @%d took no backup, want a change", n)
			}
			end := "" // the tree now
			if n > 0 {
				end = m.shown()[n-1].id
			}
			if res.Plan.To != end {
				fail("revert @%d: the step ends at %q, want %q", n, res.Plan.To, end)
			}
			if changes && !conflicts {
				m.changed(KindRevert, res.Backup, true, tree)
			}
			log = append(log, fmt.Sprintf("revert @%d (%s): changes %v, conflicts %v, backup %q", n, c.ID, changes, conflicts, res.Backup))
		case op < 19:
			c := m.cps[rng.Intn(len(m.cps))]
			label := DefaultLabel // (which any number may carry)
			if c.pinned {
				label = ""
			}
			sc, err := s.Load(c.id)
			if err != nil {
				t.Fatal(err)
			}
			if label == "" {
				err = s.Unpin(ctx, sc)
			} else {
				_, err = s.Pin(ctx, sc, PinOptions{Label: label})
			}
			if err != nil {
				fail("pin %s: %v", c.id, err)
			}
			c.pinned = label != ""
			log = append(log, fmt.Sprintf("pin %s %q", c.id, label))
		default:
			if prompts < len(ts)-1 {
				prompts++
				os.WriteFile(tp, data[:ts[prompts].PromptOffset], 0o644)
			} else {
				os.WriteFile(tp, data, 0o644)
			}
			log = append(log, "the transcript grows")
		}
		checkModel(t, s, m, gcd, fail)
	}
}

// checkModel holds the store to the model.
func checkModel(t *testing.T, s *Store, m *storeModel, gcd bool, fail func(string, ...any)) {
	t.Helper()
	var all []string
	for _, c := range m.cps {
		all = append(all, c.id)
	}
	if ids := mustIDs(t, s); !slices.Equal(ids, all) {
		fail("the store holds %v, the model %v", ids, all)
	}
	cps, _, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	shown := m.shown()
	listed := slices.DeleteFunc(cps, (*Checkpoint).Backup)
	if len(listed) != len(shown) {
		fail("list shows %d checkpoints, the model %d", len(listed), len(shown))
	}
	for i, c := range listed {
		if c.ID != shown[i].id || (c.Pinned != "") != shown[i].pinned {
			fail("@%d is %s (pinned %q), the model's %s (pinned %v)", i, c.ID, c.Pinned, shown[i].id, shown[i].pinned)
		}
		if r, err := s.Resolve(fmt.Sprint("@", i)); err != nil || r.ID != c.ID {
			fail("@%d names %v (%v), want %s", i, r, err, c.ID)
		}
	}
	if got := treeOf(t, s.Project); !maps.Equal(got, m.tree) {
		fail("the tree is %v, the model's %v", got, m.tree)
	}
	h, err := s.History()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != len(m.entries) {
		fail("the restore history has %d entries, the model %d", len(h.Entries), len(m.entries))
	}
	for i, e := range h.Entries {
		me := m.entries[i]
		if e.BackupCheckpoint != me.backup || e.Kind != me.kind || (e.UndoneBy != "") != me.undone || !e.Done {
			fail("history entry %d: %+v, the model's %+v", i, e, me)
		}
	}
	if !gcd {
		return
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) > 0 {
		fail("validate after gc: %+v %v", probs, err)
	}
	elsewhere := &Store{Dir: s.Dir, Project: t.TempDir(), Mode: s.Mode, Homes: s.Homes} // the store, restoring into an empty folder
	for _, mc := range m.cps {
		c, err := elsewhere.Load(mc.id)
		if err != nil {
			fail("%s: %v", mc.id, err)
		}
		if _, err := elsewhere.restoreTree(ctx, c, false); err != nil {
			fail("restore %s: %v", mc.id, err)
		}
		if got := treeOf(t, elsewhere.Project); !maps.Equal(got, mc.tree) {
			fail("%s restores the tree %v, want %v", mc.id, got, mc.tree)
		}
	}
}
