//go:build unix

package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// world is one project with its store, a Claude transcript and a HOME, at
// fixed absolute paths (the store records absolute paths), reset from a
// template before every kill.
type world struct {
	root       string // holds everything below
	home       string
	project    string
	transcript string
	settings   string
	env        []string

	ids     map[string]string // checkpoint name ("A", "B") -> id
	digests map[string]digest // tree state name -> digest
	sums    map[string]string // tree state name -> digest sum
	hashes  map[string]string // tree state name -> the tree_hash rewind gives it
	runs    int
	tr      []byte // the transcript as the template holds it
	cut     int64  // the boundary back 1 cuts at
	fork    int64  // the offset the fork case forks at
}

// newWorld builds the template: tree A (saved), transcript grown and tree
// B (saved), transcript grown and tree C (not saved).
func newWorld(t testing.TB, root string, files int, transcriptMB int) *world {
	t.Helper()
	w := &world{
		root: root, home: filepath.Join(root, "home"), project: filepath.Join(root, "p"),
		ids: map[string]string{}, digests: map[string]digest{}, sums: map[string]string{}, hashes: map[string]string{},
	}
	w.transcript = filepath.Join(w.home, ".claude/projects/-p/11111111-2222-4333-8444-555555555555.jsonl")
	w.settings = filepath.Join(w.home, ".claude/settings.json")
	w.env = []string{"HOME=" + w.home}
	genTree(t, w.project, files, 1)
	genTranscript(t, w.transcript, transcriptMB<<20, 1)
	writeFile(t, w.settings, []byte("{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\n  \"n\": 1.50\n}\n"), 0o600)
	w.rewind(t, "init", "--mode", "project")
	w.save(t, "A")
	w.grow(t, 256<<10, 2)
	mutateTree(t, w.project, 2)
	w.save(t, "B")
	w.grow(t, 256<<10, 3)
	mutateTree(t, w.project, 3)
	w.state(t, "C")
	w.tr = w.readTranscript(t)
	r := mustRun(t, proc{name: "rewind-jsonl", args: []string{"back", "1", w.transcript}, env: w.env})
	var b struct{ Offset int64 }
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || b.Offset <= 0 {
		t.Fatalf("rewind-jsonl back 1: %v %q", err, r.stdout)
	}
	w.cut = b.Offset
	w.fork = int64(bytes.LastIndexByte(w.tr[:len(w.tr)/2], '\n') + 1)
	return w
}

func (w *world) rewind(t testing.TB, args ...string) result {
	t.Helper()
	return mustRun(t, proc{name: "rewind", args: append(args, "-C", w.project), env: w.env, dir: w.project})
}

// save takes checkpoint name of the tree as it is and records its digest.
func (w *world) save(t testing.TB, name string) {
	t.Helper()
	w.rewind(t, "save", "--transcript", w.transcript, "--agent", "claude", name)
	w.ids[name] = checkpoints(t, w.project, w.env)[0]
	w.state(t, name)
}

func (w *world) state(t testing.TB, name string) {
	w.digests[name] = treeDigest(t, w.project)
	w.sums[name] = w.digests[name].sum()
}

func (w *world) grow(t testing.TB, n int, seed uint64) {
	t.Helper()
	var b bytes.Buffer
	appendTurns(&b, n, seed, "s1")
	f, err := os.OpenFile(w.transcript, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
}

func (w *world) readTranscript(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(w.transcript)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// crashCase is one command to kill at random instants.
type crashCase struct {
	name string
	// setup runs once on the template, after newWorld.
	setup func(t testing.TB, w *world)
	cmd   func(w *world) proc
	// before and after are the tree states the command goes from and to.
	before, after string
	// cuts says the command may cut the transcript at w.cut.
	cuts bool
	// undoable: a tree neither before nor after must come back with
	// 'rewind undo-restore'.
	undoable bool
	// again: the tree states a second undo-restore may leave (killed
	// undo-restores are recovered by running them again).
	again []string
}

func crashCases() []crashCase {
	rw := func(args ...string) func(w *world) proc {
		return func(w *world) proc {
			return proc{name: "rewind", args: append(args, "-C", w.project), env: w.env, dir: w.project}
		}
	}
	return []crashCase{
		{name: "save", before: "C", after: "C", cmd: func(w *world) proc {
			return rw("save", "--transcript", w.transcript, "--agent", "claude", "killed")(w)
		}},
		{name: "restore", before: "C", after: "A", undoable: true, cmd: func(w *world) proc {
			return rw("restore", w.ids["A"], "--yes")(w)
		}},
		{name: "undo-restore", before: "A", after: "C", again: []string{"A", "C"},
			setup: func(t testing.TB, w *world) { w.rewind(t, "restore", w.ids["A"], "--code-only", "--yes") },
			cmd:   rw("undo-restore")},
		{name: "back-in-place", before: "C", after: "B", cuts: true, undoable: true, cmd: func(w *world) proc {
			return rw("back", "1", "--both", "--in-place", "--transcript", w.transcript, "--agent", "claude")(w)
		}},
		{name: "fork-create", before: "C", after: "C", cmd: func(w *world) proc {
			return proc{name: "rewind-fork", args: []string{"create", "--from", w.transcript, "--offset", fmt.Sprint(w.fork), "--agent", "claude"}, env: w.env}
		}},
		{name: "hook-register", before: "C", after: "C", cmd: func(w *world) proc {
			return proc{name: "rewind-hook", args: []string{"register", "--agents", "claude", "--settings", w.settings, "--tier", "aggressive", "--hook", bin("rewind-hook")}, env: w.env}
		}},
	}
}

// sampleEvery: every sampleEvery-th kill restores each new checkpoint in
// full and compares it byte for byte.
const sampleEvery = 8

// TestCrashAtAnyInstant kills each command at random fractions of its
// measured duration and checks, after every kill, that nothing is lost and
// nothing half-written is visible.
func TestCrashAtAnyInstant(t *testing.T) {
	for _, c := range crashCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := workDir(t)
			live := filepath.Join(base, "w")
			w := newWorld(t, live, crashFiles, crashTranscriptMB)
			if c.setup != nil {
				c.setup(t, w)
				w.tr = w.readTranscript(t)
			}
			w.state(t, "pre")
			if w.sums["pre"] != w.sums[c.before] {
				t.Fatalf("template tree is not state %s: %s", c.before, w.digests[c.before].diff(w.digests["pre"]))
			}
			tpl := filepath.Join(base, "tpl")
			copyTree(t, live, tpl)
			settings0, _ := os.ReadFile(w.settings)

			// The command's duration, and what a whole run leaves.
			var durs []time.Duration
			var settings1 []byte
			for range 5 {
				copyTree(t, tpl, live)
				r := mustRun(t, c.cmd(w))
				durs = append(durs, r.dur)
				settings1, _ = os.ReadFile(w.settings)
			}
			// The shortest of five: a kill point past the end of most runs
			// would test nothing.
			d := slices.Min(durs)
			t.Logf("%s takes %v", c.name, d)

			known := map[string]int{}
			kills := crashKills
			if n, err := strconv.Atoi(os.Getenv("REWIND_RELIABILITY_KILLS")); err == nil && n > 0 {
				kills = n
			}
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
			failures := 0
			killed, realFailures := 0, 0
			for i := range kills {
				copyTree(t, tpl, live)
				before := checkpoints(t, w.project, w.env)
				at := time.Duration(rng.Float64() * 1.05 * float64(d))
				r := runKillAfter(t, c.cmd(w), at)
				if r.killed {
					killed++
				}
				tag := fmt.Sprintf("kill %d at %v of %v (killed=%v exit=%d)", i, at, d, r.killed, r.code)
				errs := w.check(t, c, before, settings0, settings1)
				var real []string
				for _, e := range errs {
					if d := knownDefect(e); d != "" {
						known[d]++
						t.Logf("%s: known defect: %s", tag, firstLineOf(e))
					} else {
						real = append(real, e)
					}
				}
				if len(errs) > 0 {
					failures++
				}
				if len(real) > 0 {
					realFailures++
					t.Errorf("%s: %s", tag, strings.Join(real, "\n\t"))
					if realFailures > 5 {
						t.Fatalf("too many failures; stopping")
					}
				}
			}
			figures(t, "crash/"+c.name, kills, killed, failures)
			skipKnown(t, known)
		})
	}
}

// check runs every property after one kill and returns what broke.
func (w *world) check(t testing.TB, c crashCase, before []string, settings0, settings1 []byte) []string {
	t.Helper()
	w.runs++
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	// The store validates (leftover staging is allowed until the next run).
	probs, _ := validate(t, w.project, w.env)
	for _, p := range probs {
		fail("validate: %s", p)
	}
	// Every checkpoint the run added holds the tree as it was when the run
	// started, byte for byte.
	old := map[string]bool{}
	for _, id := range before {
		old[id] = true
	}
	// (validate checked each archive against its manifest and the manifest's
	// tree hash against the metadata: a checkpoint whose tree hash is the one
	// a byte-exact restore of the same state gave holds that state. Every
	// sampleEvery-th run restores each new checkpoint in full anyway.)
	for _, l := range listCheckpoints(t, w.project, w.env) {
		id, hash := l.Checkpoint.ID, l.Checkpoint.Snapshot.TreeHash
		if old[id] {
			continue
		}
		want, known := w.hashes[c.before]
		if known && hash == want && w.runs%sampleEvery != 0 {
			continue
		}
		if d, err := restoredDigest(t, w, id); err != nil {
			fail("new checkpoint %s does not restore: %v", id, err)
		} else if d.sum() != w.sums[c.before] {
			fail("new checkpoint %s does not hold the tree it was taken of: %s", id, w.digests[c.before].diff(d))
		} else if !known {
			w.hashes[c.before] = hash
		} else if hash != want {
			fail("new checkpoint %s restores the tree it was taken of, but its tree hash %s is not %s", id, hash, want)
		}
	}
	// The tree is before or after, or undo-restore brings "before" back.
	now := treeDigest(t, w.project).sum()
	if now != w.sums[c.before] && now != w.sums[c.after] {
		switch {
		case c.undoable:
			r := run(t, proc{name: "rewind", args: []string{"undo-restore", "-C", w.project}, env: w.env})
			if got := treeDigest(t, w.project); got.sum() != w.sums[c.before] {
				fail("tree half restored, and undo-restore (exit %d: %s) does not bring it back: %s",
					r.code, strings.TrimSpace(r.stderr), w.digests[c.before].diff(got))
			}
		case c.again != nil:
			r := run(t, proc{name: "rewind", args: []string{"undo-restore", "-C", w.project}, env: w.env})
			got := treeDigest(t, w.project).sum()
			ok := false
			for _, s := range c.again {
				ok = ok || got == w.sums[s]
			}
			if !ok {
				fail("tree half restored, and running undo-restore again (exit %d: %s) does not finish it", r.code, strings.TrimSpace(r.stderr))
			}
		default:
			fail("tree changed by %s: %s", c.name, w.digests[c.before].diff(treeDigest(t, w.project)))
		}
	}
	// The transcript is whole: as it was, or cut at the boundary with a
	// backup holding every byte.
	cur := w.readTranscript(t)
	switch {
	case bytes.Equal(cur, w.tr):
	case c.cuts && bytes.Equal(cur, w.tr[:w.cut]):
		if !backupHolds(filepath.Join(w.project, ".agent/rewind/transcript-backup"), w.tr) {
			fail("transcript cut, but no backup in transcript-backup/ holds its %d bytes", len(w.tr))
		}
	default:
		fail("transcript is %d bytes, neither the %d it had nor the cut (%d); whole=%v", len(cur), len(w.tr), w.cut, wholeJSONL(cur))
	}
	// Forks beside the transcript are whole JSONL and hold a prefix of it.
	des, _ := os.ReadDir(filepath.Dir(w.transcript))
	for _, de := range des {
		p := filepath.Join(filepath.Dir(w.transcript), de.Name())
		if p == w.transcript || !strings.HasSuffix(de.Name(), ".jsonl") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		b, _ := os.ReadFile(p)
		if err := wholeJSONL(b); err != nil {
			fail("fork %s is not whole: %v", de.Name(), err)
		}
		if n := commonPrefix(b, w.tr); n < len(b)/2 {
			fail("fork %s holds only %d bytes of the transcript's prefix (of %d)", de.Name(), n, len(b))
		}
	}
	// Settings parse, and are the old or the new bytes.
	if s, err := os.ReadFile(w.settings); err != nil {
		fail("settings: %v", err)
	} else if !bytes.Equal(s, settings0) && !bytes.Equal(s, settings1) {
		fail("settings are neither the old nor the new file: %q", s)
	}
	if cfg, err := os.ReadFile(filepath.Join(w.home, ".rewind/config.json")); err == nil && !json.Valid(cfg) {
		fail("~/.rewind/config.json does not parse: %q", cfg)
	}
	// The next run succeeds and leaves no temporary or staging file. A
	// restore's staging folder is cleared by the next restore, a fork's temp
	// file by the next fork: every sampleEvery/2-th kill runs the command
	// again in full; the others only save (which clears the store's
	// staging) and skip those two.
	full := !c.undoable && c.again == nil || w.runs%(sampleEvery/2) == 0
	if full {
		if r := run(t, c.cmd(w)); r.code != 0 && c.name != "undo-restore" {
			fail("the next %s failed (exit %d): %s", c.name, r.code, strings.TrimSpace(r.stderr))
		}
	}
	if r := run(t, proc{name: "rewind", args: []string{"save", "--transcript", w.transcript, "after", "-C", w.project}, env: w.env}); r.code != 0 {
		fail("the next save failed (exit %d): %s", r.code, strings.TrimSpace(r.stderr))
	}
	left := leftovers(w.root)
	if !full {
		left = slices.DeleteFunc(left, func(p string) bool {
			return strings.Contains(p, "/.rewind-restore-") || filepath.Dir(p) == filepath.Dir(w.transcript)
		})
	}
	for _, l := range append(left, orphanLayers(t, w)...) {
		p, _ := filepath.Rel(w.root, l)
		fail("left behind after the next run: %s", p)
	}
	return errs
}

// restoredDigest restores checkpoint id into an empty folder with
// rewind-snap (following its layer chain) and digests what it wrote.
func restoredDigest(t testing.TB, w *world, id string) (digest, error) {
	t.Helper()
	dir, err := os.MkdirTemp(w.root, "restored-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	r := run(t, proc{name: "rewind-snap", args: []string{"restore", "--root", dir, "--manifest",
		filepath.Join(w.project, ".agent/rewind/checkpoints", id, "manifest")}, env: w.env})
	if r.code != 0 {
		return nil, fmt.Errorf("rewind-snap restore: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
	}
	return treeDigest(t, dir), nil
}

// orphanLayers lists layer archives no checkpoint is named after and no
// checkpoint's manifest names: what a killed save wrote before it could
// publish its checkpoint. (gc keeps a deleted checkpoint's archive while a
// newer one reads from it.)
func orphanLayers(t testing.TB, w *world) []string {
	t.Helper()
	ids := map[string]bool{}
	var manifests []byte
	for _, id := range checkpoints(t, w.project, w.env) {
		ids[id] = true
		b, _ := os.ReadFile(filepath.Join(w.project, ".agent/rewind/checkpoints", id, "manifest"))
		manifests = append(manifests, b...)
	}
	dir := filepath.Join(w.project, ".agent/rewind/layers")
	des, _ := os.ReadDir(dir)
	var out []string
	for _, de := range des {
		if id, ok := strings.CutSuffix(de.Name(), ".tar.gz"); ok && !ids[id] && !bytes.Contains(manifests, []byte("layers/"+de.Name())) {
			out = append(out, filepath.Join(dir, de.Name()))
		}
	}
	return out
}

func rel(root string, ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i], _ = filepath.Rel(root, p)
	}
	return out
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// backupHolds reports whether a file in dir has exactly data.
func backupHolds(dir string, data []byte) bool {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if b, err := os.ReadFile(filepath.Join(dir, de.Name())); err == nil && bytes.Equal(b, data) {
			return true
		}
	}
	return false
}

// knownDefects are failures whose fix belongs to code this suite must not
// change while it is being reworked (snap/, rewind/store/). Each is counted
// and logged, and skips its subtest instead of failing CI;
// REWIND_RELIABILITY_STRICT=1 turns them into failures. The report to the lead holds their
// reproducers; remove an entry once its defect is fixed.
var knownDefects = []struct{ match, defect string }{}

func knownDefect(err string) string {
	if os.Getenv("REWIND_RELIABILITY_STRICT") != "" {
		return ""
	}
	for _, k := range knownDefects {
		if strings.Contains(err, k.match) {
			return k.defect
		}
	}
	return ""
}

// skipKnown skips a test that met only known defects, naming them.
func skipKnown(t *testing.T, known map[string]int) {
	t.Helper()
	if len(known) == 0 || t.Failed() {
		return
	}
	var ds []string
	for d, n := range known {
		ds = append(ds, fmt.Sprintf("%s (%d times)", d, n))
	}
	slices.Sort(ds)
	t.Skipf("defect: %s; see report", strings.Join(ds, "; defect: "))
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 240 {
		l = l[:240] + "…"
	}
	return l
}
