package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"rewind.dev/hookd"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/fixtures"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
	"rewind.dev/snap"
)

var fixture = fixtures.Path("claude/realclient-cc2.1.197-4-prompts-resumed.jsonl")

var ctx = context.Background()

// project makes a git project with a store in homes of its own
// (testHomes). It reads and sets nothing of the environment, so a test using
// it may run in parallel.
func project(t *testing.T) *Store {
	t.Helper()
	return projectIn(t, testHomes(t))
}

// envProject is project in the homes of a user whose HOME, XDG_CONFIG_HOME
// and REWIND_HOME name a temporary folder (setHome): for a test of what
// reads the environment itself, an agent's session folders (jsonl) or
// Rewind's and the agents' state folders (snap). It cannot run in parallel.
func envProject(t *testing.T) *Store {
	t.Helper()
	setHome(t, t.TempDir())
	return projectIn(t, EnvHomes())
}

// testHomes are the homes of a user whose home is a temporary folder, as
// EnvHomes would give them with HOME naming it and no REWIND_HOME or
// XDG_DATA_HOME.
func testHomes(t *testing.T) Homes {
	user := t.TempDir()
	return Homes{Rewind: filepath.Join(user, layout.HomeName), User: user, Exports: exportsIn(user, "")}
}

// setHome makes home the user's home for the test: HOME, XDG_CONFIG_HOME
// and REWIND_HOME name it and folders in it.
func setHome(t *testing.T, home string) {
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("REWIND_HOME", filepath.Join(home, layout.HomeName))
}

// projectIn makes a git project with a store in the homes h.
func projectIn(t *testing.T, h Homes) *Store {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	write(t, dir, "main.go", "package main\n")
	s, created, err := h.Init(dir, layout.ModeProject)
	if err != nil || !created {
		t.Fatalf("init: %v %v", created, err)
	}
	return s
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// agentTranscript is a path in Claude Code's session folders under the test's
// HOME (set by envProject): where a hook's or session.json's transcript must
// lie.
func agentTranscript(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(os.Getenv("HOME"), ".claude", "projects", "-p")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

func save(t *testing.T, s *Store, o SaveOptions) *Checkpoint {
	t.Helper()
	c, err := s.Save(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fixtureBytes(t testing.TB) []byte {
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// turns returns the fixture's turns, oldest first.
func turns(t *testing.T, path string) []jsonl.Turn {
	tr, err := jsonl.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ts, err := tr.Turns(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(ts)-1; i < j; i, j = i+1, j-1 {
		ts[i], ts[j] = ts[j], ts[i]
	}
	return ts
}

func TestInitIdempotentAndExcluded(t *testing.T) {
	t.Parallel()
	s := project(t)
	if _, created, err := s.Homes.Init(s.Project, layout.ModeProject); err != nil || created {
		t.Fatalf("second init: created=%v err=%v", created, err)
	}
	ex := read(t, filepath.Join(s.Project, ".git", "info", "exclude"))
	if strings.Count(ex, "/.agent/rewind/") != 1 {
		t.Errorf(".git/info/exclude has the store %d times:\n%s", strings.Count(ex, "/.agent/rewind/"), ex)
	}
	out, _ := exec.Command("git", "-C", s.Project, "status", "--porcelain", "--untracked-files=all").Output()
	if strings.Contains(string(out), ".agent") {
		t.Errorf("git sees the store:\n%s", out)
	}
	if _, _, err := s.Homes.Init(s.Project, layout.ModeGlobal); err == nil {
		t.Error("switching modes silently")
	}
}

func TestSaveReusesUnchangedSnapshotAndRecordsCursor(t *testing.T) {
	t.Parallel()
	s := project(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl")
	data := fixtureBytes(t)
	os.WriteFile(tp, data[:12613], 0o644)
	a := save(t, s, SaveOptions{TranscriptPath: tp})
	os.WriteFile(tp, data, 0o644)
	b := save(t, s, SaveOptions{TranscriptPath: tp})
	if b.Snapshot.ReusedFrom != a.ID {
		t.Errorf("unchanged tree: reused_from = %q, want %s", b.Snapshot.ReusedFrom, a.ID)
	}
	if !b.Snapshot.Layer || b.Snapshot.LayerFiles != 0 || b.Snapshot.CompressedBytes > 100 {
		t.Errorf("unchanged tree: want an empty layer, got %+v", b.Snapshot)
	}
	if b.Transcript.Cursor.ByteOffsetEnd != int64(len(data)) || b.Transcript.Base != a.ID {
		t.Errorf("cursor %d base %q, want %d and %s", b.Transcript.Cursor.ByteOffsetEnd, b.Transcript.Base, len(data), a.ID)
	}
	// Incremental capture reconstructs exactly.
	if got := inflate(t, s, b); !bytes.Equal(got, data) {
		t.Fatalf("reconstructed transcript differs (%d bytes, want %d)", len(got), len(data))
	}
	if err := s.verifyTranscript(ctx, b); err != nil {
		t.Fatal(err)
	}
}

// TestNoopCheckpointSharesTheNewest: once no file is racy in the newest
// checkpoint's manifest (changed too close before its scan), a checkpoint of the unchanged tree writes no
// layer and links the newest one's manifest and archive, so the chain does
// not grow. It restores exactly, a layer over it reads right, and gc of the
// checkpoint it shares with leaves it whole.
func TestNoopCheckpointSharesTheNewest(t *testing.T) {
	t.Parallel()
	s := project(t)
	var passed time.Duration // how far the store's clock runs ahead
	s.Now = func() time.Time { return time.Now().Add(passed) }
	write(t, s.Project, "a.txt", "a\n")
	write(t, s.Project, "sub/b.txt", "b\n")
	base := save(t, s, SaveOptions{})
	write(t, s.Project, "a.txt", "a2\n")
	save(t, s, SaveOptions{}) // a layer over base
	// Files changed just before a scan are racy in its manifest and hashed
	// next time; a scan past that window records them settled. The
	// scan's start is read from the store's clock: 2.1 s pass on it.
	passed = 2100 * time.Millisecond
	layer := save(t, s, SaveOptions{})
	noop := save(t, s, SaveOptions{})
	if noop.Snapshot.ReusedFrom != layer.Snapshot.ReusedFrom || noop.Snapshot.Depth != layer.Snapshot.Depth || noop.Snapshot.TreeHash != layer.Snapshot.TreeHash {
		t.Fatalf("no-op checkpoint %+v, want it to share %s (depth %d)", noop.Snapshot, layer.ID, layer.Snapshot.Depth)
	}
	if _, err := os.Stat(filepath.Join(s.layersDir(), noop.ID+".tar.gz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a no-op checkpoint wrote a layer: %v", err)
	}
	for _, f := range []string{ManifestFile, SnapshotFile} {
		a, _ := os.Stat(filepath.Join(layer.Dir, f))
		b, _ := os.Stat(filepath.Join(noop.Dir, f))
		if a == nil || b == nil || !os.SameFile(a, b) {
			t.Errorf("%s of the no-op checkpoint is not %s's", f, layer.ID)
		}
	}
	write(t, s.Project, "sub/b.txt", "b2\n")
	over := save(t, s, SaveOptions{})
	if !over.Snapshot.Layer || over.Snapshot.LayerFiles != 1 {
		t.Fatalf("after the no-op, one change: %+v, want a layer of one file", over.Snapshot)
	}
	if err := s.remove(layer); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sweepLayers(); err != nil {
		t.Fatal(err)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("validate after gc: %v %v", probs, err)
	}
	for _, c := range []*Checkpoint{base, noop, over} {
		c, err := s.Load(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.restoreTree(ctx, c, false); err != nil {
			t.Fatalf("restore %s: %v", c.ID, err)
		}
		got, err := s.Save(ctx, SaveOptions{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Snapshot.TreeHash != c.Snapshot.TreeHash {
			t.Fatalf("restore of %s gives tree %s, want %s", c.ID, got.Snapshot.TreeHash, c.Snapshot.TreeHash)
		}
	}
}

func inflate(t *testing.T, s *Store, c *Checkpoint) []byte {
	t.Helper()
	chain, err := s.TranscriptChain(c)
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, p := range chain {
		b, _ := os.ReadFile(p)
		all.Write(b)
	}
	zr, err := gzip.NewReader(&all)
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTranscriptRewrittenFallsBackToFull: when the file no longer starts
// with the captured bytes (truncated and regrown), the capture is whole.
func TestTranscriptRewrittenFallsBackToFull(t *testing.T) {
	t.Parallel()
	s := project(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl")
	data := fixtureBytes(t)
	os.WriteFile(tp, data, 0o644)
	save(t, s, SaveOptions{TranscriptPath: tp})
	other := append([]byte(`{"type":"user","uuid":"x","message":{"role":"user","content":"other"}}`+"\n"), data[:5000]...)
	other = other[:bytes.LastIndexByte(other, '\n')+1]
	os.WriteFile(tp, other, 0o644)
	b := save(t, s, SaveOptions{TranscriptPath: tp})
	if b.Transcript.Base != "" {
		t.Errorf("built on a prefix the file no longer has (base %s)", b.Transcript.Base)
	}
	if got := inflate(t, s, b); !bytes.Equal(got, other) {
		t.Error("full capture differs from the file")
	}
}

func TestConcurrentSaves(t *testing.T) {
	t.Parallel()
	s := project(t)
	var wg sync.WaitGroup
	ids := make([]string, 16)
	errs := make([]error, 16)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			write(t, s.Project, fmt.Sprintf("f%d.txt", i), "x")
			c, err := s.Save(ctx, SaveOptions{Description: fmt.Sprint(i)})
			errs[i] = err
			if c != nil {
				ids[i] = c.ID
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, id := range ids {
		if errs[i] != nil {
			t.Fatalf("save %d: %v", i, errs[i])
		}
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
	if probs, n, err := s.Validate(ctx); err != nil || len(probs) > 0 || n != 16 {
		t.Fatalf("validate: %d checkpoints, %v, %v", n, probs, err)
	}
}

func TestStaleStagingCleanedAndNeverListed(t *testing.T) {
	t.Parallel()
	s := project(t)
	save(t, s, SaveOptions{})
	// A crash mid-save leaves a staging folder, and a folder without
	// metadata in checkpoints/ is not a checkpoint.
	os.MkdirAll(filepath.Join(s.stagingDir(), "20990101_000000_001"), 0o755)
	os.MkdirAll(filepath.Join(s.checkpointsDir(), "20990101_000000_002"), 0o755)
	cps, bad, err := s.List()
	if err != nil || len(cps) != 1 || len(bad) != 1 {
		t.Fatalf("list: %d checkpoints, bad %v, %v", len(cps), bad, err)
	}
	save(t, s, SaveOptions{})
	if des, _ := os.ReadDir(s.stagingDir()); len(des) != 0 {
		t.Errorf("staging not cleaned: %v", des)
	}
}

func TestRestoreThenUndoRestoreBringsBackTreeAndTranscript(t *testing.T) {
	t.Parallel()
	s := project(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl")
	data := fixtureBytes(t)
	ts := turns(t, fixture)
	os.WriteFile(tp, data[:ts[2].PromptOffset], 0o644)
	write(t, s.Project, "a.txt", "old")
	cp := save(t, s, SaveOptions{TranscriptPath: tp})

	os.WriteFile(tp, data, 0o644)
	write(t, s.Project, "a.txt", "new")
	write(t, s.Project, "b.txt", "added")
	res, err := s.Restore(ctx, cp, RestoreOptions{Code: true, Context: "in-place"})
	if err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(s.Project, "a.txt")) != "old" || read(t, filepath.Join(s.Project, "b.txt")) != "<open "+filepath.Join(s.Project, "b.txt")+": no such file or directory>" {
		t.Fatal("tree not restored")
	}
	if got := read(t, tp); got != string(data[:ts[2].PromptOffset]) {
		t.Fatalf("transcript not cut back (%d bytes)", len(got))
	}
	if res.Backup == "" || res.Truncate == nil {
		t.Fatalf("no backup recorded: %+v", res)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(s.Project, "a.txt")) != "new" || read(t, filepath.Join(s.Project, "b.txt")) != "added" {
		t.Error("undo-restore did not bring the tree back")
	}
	if read(t, tp) != string(data) {
		t.Error("undo-restore did not bring the transcript back")
	}
	h, _ := s.History()
	if len(h.Entries) != 2 || h.Entries[0].UndoneBy != h.Entries[1].ID {
		t.Errorf("history not recorded: %+v", h.Entries)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err == nil {
		t.Error("undid an undo-restore")
	}
}

// TestBackBothLineageAcrossForks: in a session forked by Rewind, and in a
// fork of that fork, back --both finds checkpoints of the sessions they were
// forked from — for Claude, whose forks are byte prefixes, and for Droid,
// whose forks rewrite the first line (session_start) and so shift the rest.
func TestBackBothLineageAcrossForks(t *testing.T) {
	t.Parallel()
	droid := droidTranscript(t, 4)
	pi, err := os.ReadFile(fixtures.Path("pi/realclient-pi0.73.1-tree-branches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		last int // how far back the third step goes
	}{
		{"claude", fixtureBytes(t), 2},
		{"droid", droid, 2},
		// Gemini: a fork names its session in every line, the rest at the same offsets; a
		// fork that keeps no prompt is refused, so the last step goes back 1.
		{"gemini", geminiTranscript(t, 4), 1},
		// pi: four prompts on the path from the last line, two more on branches /tree left;
		// a fork that keeps no reply of the agent is refused, so the last step goes back 1.
		{"pi", pi, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := project(t)
			name := "1cbbde27-5fcc-4652-9047-4142f5f1912c.jsonl"
			switch tc.name {
			case "pi":
				name = "2026-11-23T14-07-39-399Z_01a208bb-dd86-72e3-8209-b2ae8bd1fd78.jsonl"
			case "gemini":
				name = "session-2026-11-23T14-06-c5615351.jsonl"
			}
			tp := filepath.Join(t.TempDir(), name)
			os.WriteFile(tp, tc.data, 0o644)
			ts := turns(t, tp)
			if len(ts) != 4 {
				t.Fatalf("%d prompts, want 4", len(ts))
			}
			for i, tu := range ts { // a checkpoint at each prompt's hook: between offset and prompt_offset
				os.WriteFile(tp, tc.data[:tu.PromptOffset], 0o644)
				write(t, s.Project, "state.txt", fmt.Sprint("before prompt ", i+1))
				save(t, s, SaveOptions{TranscriptPath: tp, Trigger: Trigger{Kind: "hook", Event: "UserPromptSubmit"}})
			}
			os.WriteFile(tp, tc.data, 0o644)
			write(t, s.Project, "state.txt", "after prompt 4")

			steps := []struct {
				n    int
				want string
			}{
				{1, "before prompt 4"},                             // in the session: a fork holding prompts 1–3
				{1, "before prompt 3"},                             // in that fork: a checkpoint of the session
				{tc.last, fmt.Sprint("before prompt ", 3-tc.last)}, // in the fork of the fork (prompt 1, 2): the session's again
			}
			path := tp
			for i, st := range steps {
				res, err := s.Back(ctx, BackOptions{N: st.n, Both: true, TranscriptPath: path})
				if err != nil {
					t.Fatalf("step %d, back %d --both in %s: %v", i+1, st.n, filepath.Base(path), err)
				}
				if got := read(t, filepath.Join(s.Project, "state.txt")); got != st.want {
					t.Fatalf("step %d, back %d --both: tree %q, want %q (checkpoint %s)", i+1, st.n, got, st.want, res.Checkpoint)
				}
				if tc.name == "gemini" && !strings.Contains(firstLine(t, res.Fork.Path), `"sessionId":"`+res.Fork.SessionID+`"`) {
					t.Fatalf("step %d: the Gemini fork's first line does not name it: %s", i+1, firstLine(t, res.Fork.Path))
				}
				if tc.name == "droid" && !strings.Contains(firstLine(t, res.Fork.Path), `"title":"[Fork] `) {
					t.Fatalf("step %d: the Droid fork's first line was not rewritten: %s", i+1, firstLine(t, res.Fork.Path))
				}
				path = res.Fork.Path
			}
		})
	}
}

// TestBackBothInAgentsOwnFork: pi's own /fork writes a new file of the path's lines, ids kept,
// under a header naming the parent file. back --both in it finds the parent session's
// checkpoint by the ids of the lines the checkpoint saw last: offsets differ, since the fork
// drops the branches the conversation had left.
func TestBackBothInAgentsOwnFork(t *testing.T) {
	t.Parallel()
	s := project(t)
	data, err := os.ReadFile(fixtures.Path("pi/realclient-pi0.73.1-tree-branches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tp := filepath.Join(dir, "2026-11-23T14-07-39-399Z_01a208bb-dd86-72e3-8209-b2ae8bd1fd78.jsonl")
	os.WriteFile(tp, data, 0o644)
	for _, tu := range turns(t, tp) { // T1, T2, T5, T6: a checkpoint at each prompt's hook
		os.WriteFile(tp, data[:tu.PromptOffset], 0o644)
		write(t, s.Project, "state.txt", fmt.Sprint("before ", tu.Text))
		save(t, s, SaveOptions{TranscriptPath: tp, Trigger: Trigger{Kind: "hook", Event: "UserPromptSubmit"}})
	}
	os.WriteFile(tp, data, 0o644)
	// pi's /fork before T6, then a prompt X in the fork: the header names the parent; the lines
	// are the path's (source lines 2-7, 12-15), ids kept.
	lines := strings.SplitAfter(string(data), "\n")
	fork := `{"type":"session","version":3,"id":"01a208be-c407-7000-8000-000000000001","timestamp":"2026-11-23T14:10:00.000Z","cwd":"/p","parentSession":` + strconv.Quote(tp) + "}\n"
	for _, n := range []int{2, 3, 4, 5, 6, 7, 12, 13, 14, 15} {
		fork += lines[n-1]
	}
	fork += `{"type":"message","id":"aaaa0001","parentId":"76364966","timestamp":"2026-11-23T14:11:00.000Z","message":{"role":"user","content":[{"type":"text","text":"X in the fork"}]}}` + "\n"
	fork += `{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-11-23T14:11:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok X"}]}}` + "\n"
	fp := filepath.Join(dir, "2026-11-23T14-10-00-000Z_01a208be-c407-7000-8000-000000000001.jsonl")
	os.WriteFile(fp, []byte(fork), 0o644)
	write(t, s.Project, "state.txt", "after X")

	for _, st := range []struct {
		n    int
		want string
	}{
		{1, "before T6 resumed"},       // X followed the line T6 followed: T6's checkpoint
		{2, "before T5 after summary"}, // the parent's checkpoint of T5, found by the ids it saw
	} {
		res, err := s.Back(ctx, BackOptions{N: st.n, Both: true, TranscriptPath: fp})
		if err != nil {
			t.Fatalf("back %d --both in pi's own fork: %v", st.n, err)
		}
		if got := read(t, filepath.Join(s.Project, "state.txt")); got != st.want {
			t.Fatalf("back %d --both: tree %q, want %q (checkpoint %s)", st.n, got, st.want, res.Checkpoint)
		}
		if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// geminiTranscript makes an n-prompt Gemini CLI session from the real two-prompt fixture: its
// first turn, then its second (a resume's lines, the prompt, the model's records) n-1 times,
// each copy with its own record ids and prompt.
func geminiTranscript(t *testing.T, n int) []byte {
	t.Helper()
	data, err := os.ReadFile(fixtures.Path("gemini/realclient-gemini0.61.0-2-prompts-resumed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	out := strings.Join(lines[:11], "")
	recordID := regexp.MustCompile(`"id":"[0-9a-f]{8}`)
	for k := 2; k <= n; k++ {
		turn := strings.Join(lines[11:29], "")
		turn = recordID.ReplaceAllString(turn, fmt.Sprintf(`"id":"%08d`, k))
		out += strings.ReplaceAll(turn, "Now edit and clean up", fmt.Sprint("Prompt ", k, ": edit and clean up"))
	}
	return []byte(out)
}

// droidTranscript makes an n-prompt Droid session from the real one-prompt
// fixture: its session_start, then its turn n times, each with its own prompt
// and event ids.
func droidTranscript(t *testing.T, n int) []byte {
	t.Helper()
	data, err := os.ReadFile(fixtures.Path("droid/realclient-droid0.225.2-tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first, body, _ := bytes.Cut(data, []byte("\n"))
	uuid := regexp.MustCompile(`"(id|parentId|turnId)":"(context-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	out := append(append([]byte(nil), first...), '\n')
	for i := 1; i <= n; i++ {
		turn := bytes.ReplaceAll(body, []byte(`"text":"write droid.txt`), []byte(fmt.Sprintf(`"text":"prompt %d: write droid.txt`, i)))
		out = append(out, uuid.ReplaceAllFunc(turn, func(id []byte) []byte { return fmt.Appendf(id[:len(id)-2:len(id)-2], "%02d", i) })...)
	}
	return out
}

func firstLine(t *testing.T, path string) string {
	t.Helper()
	line, _, _ := strings.Cut(read(t, path), "\n")
	return line
}

func TestBackSaysWhyItCannot(t *testing.T) {
	t.Parallel()
	s := project(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(tp, fixtureBytes(t), 0o644)
	_, err := s.Back(ctx, BackOptions{N: 9, TranscriptPath: tp})
	if err == nil || !strings.Contains(err.Error(), "has 4 prompts, fewer than 9") {
		t.Errorf("err = %v", err)
	}
	compacted := fixtures.Path("claude/entire-a6e4c2-compaction-v2.0.76.jsonl")
	_, err = s.Back(ctx, BackOptions{N: 5, TranscriptPath: compacted})
	if err == nil || !strings.Contains(err.Error(), "has 2 prompts, fewer than 5") {
		t.Errorf("compacted after its prompts: err = %v", err)
	}
	// --both with no checkpoint old enough changes nothing: no fork, no restore.
	write(t, s.Project, "a.txt", "now")
	before, _ := os.ReadDir(filepath.Dir(tp))
	_, err = s.Back(ctx, BackOptions{N: 1, Both: true, TranscriptPath: tp})
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.ReadDir(filepath.Dir(tp))
	if len(after) != len(before) || read(t, filepath.Join(s.Project, "a.txt")) != "now" {
		t.Error("--both without a checkpoint changed something")
	}
}

func TestUndoChoosesTheStepJustTaken(t *testing.T) {
	t.Parallel()
	s := project(t)
	write(t, s.Project, "a.txt", "1")
	save(t, s, SaveOptions{})
	write(t, s.Project, "a.txt", "2")
	save(t, s, SaveOptions{})
	write(t, s.Project, "a.txt", "3") // changed since the newest: undo goes to it
	if _, err := s.Undo(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(s.Project, "a.txt")); got != "2" {
		t.Fatalf("undo with a dirty tree: %q, want 2", got)
	}
	// The tree equals the newest step now: undo goes one step further back,
	// past the backup the first undo took (a backup is not a step).
	if _, err := s.Undo(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(s.Project, "a.txt")); got != "1" {
		t.Fatalf("undo with a clean tree: %q, want 1", got)
	}
	// A checkpoint saved after undos: undo goes to the step before it, not to a
	// backup taken in between.
	write(t, s.Project, "a.txt", "4")
	save(t, s, SaveOptions{})
	if _, err := s.Undo(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(s.Project, "a.txt")); got != "2" {
		t.Fatalf("undo after a save: %q, want 2", got)
	}
}

func TestGCKeepsPinnedReferencedAndMergesChains(t *testing.T) {
	t.Parallel()
	s := project(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl")
	data := fixtureBytes(t)
	ts := turns(t, fixture)
	var cps []*Checkpoint
	for i, tu := range ts {
		os.WriteFile(tp, data[:tu.PromptOffset], 0o644)
		write(t, s.Project, "a.txt", fmt.Sprint(i))
		cps = append(cps, save(t, s, SaveOptions{TranscriptPath: tp}))
	}
	os.WriteFile(tp, data, 0o644)
	last := save(t, s, SaveOptions{TranscriptPath: tp})
	if _, err := s.Pin(ctx, cps[1], PinOptions{Label: "keep"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.GC(ctx, GCOptions{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 3 || res.Kept != 2 || len(res.Protected) != 1 {
		t.Fatalf("gc: %+v", res)
	}
	last, _ = s.Load(last.ID)
	if got := inflate(t, s, last); !bytes.Equal(got, data) {
		t.Fatal("the newest checkpoint's transcript broke when its bases were deleted")
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("validate after gc: %v %v", probs, err)
	}
}

func TestValidateFindsDamage(t *testing.T) {
	t.Parallel()
	s := project(t)
	c := save(t, s, SaveOptions{})
	f, _ := os.OpenFile(c.SnapshotPath(), os.O_RDWR, 0)
	fi, _ := f.Stat()
	f.WriteAt([]byte{0xff, 0xff}, fi.Size()-6)
	f.Close()
	probs, _, err := s.Validate(ctx)
	if err != nil || len(probs) != 1 || probs[0].What != c.ID {
		t.Fatalf("validate: %+v %v", probs, err)
	}
}

func TestResolveNames(t *testing.T) {
	t.Parallel()
	s := project(t)
	a := save(t, s, SaveOptions{})
	write(t, s.Project, "x", "1")
	b := save(t, s, SaveOptions{})
	for name, want := range map[string]string{"@0": b.ID, "@1": a.ID, a.ID: a.ID, b.ID[:len(b.ID)-1] + b.ID[len(b.ID)-1:]: b.ID} {
		c, err := s.Resolve(name)
		if err != nil || c.ID != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", name, c, err, want)
		}
	}
	for _, bad := range []string{"@2", "@x", "nope", "2"} {
		if _, err := s.Resolve(bad); err == nil {
			t.Errorf("Resolve(%q) succeeded", bad)
		}
	}
}

func TestStoreNeverCapturedOrRestoredOver(t *testing.T) {
	t.Parallel()
	s := project(t)
	c := save(t, s, SaveOptions{})
	m, err := snap.ReadManifest(c.ManifestPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Entries {
		if strings.HasPrefix(e.Path, ".agent/rewind") {
			t.Fatalf("the store is in the snapshot: %s", e.Path)
		}
	}
	write(t, s.Project, "later.txt", "x")
	save(t, s, SaveOptions{})
	if _, err := s.Restore(ctx, c, RestoreOptions{Code: true}); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.IDs(); len(ids) != 3 { // two saves and the restore's backup
		t.Errorf("restore touched the store: %d checkpoints", len(ids))
	}
}

// TestIDsNeverReused: after gc deletes the newest-but-one checkpoints, a
// new checkpoint still sorts after every id the store ever used.
func TestIDsNeverReused(t *testing.T) {
	t.Parallel()
	s := project(t)
	a := save(t, s, SaveOptions{})
	write(t, s.Project, "x", "1")
	b := save(t, s, SaveOptions{})
	write(t, s.Project, "x", "2")
	save(t, s, SaveOptions{})
	if err := s.remove(b); err != nil {
		t.Fatal(err)
	}
	write(t, s.Project, "x", "3")
	d := save(t, s, SaveOptions{})
	if d.ID <= b.ID || d.ID <= a.ID {
		t.Fatalf("new id %s does not sort after %s", d.ID, b.ID)
	}
	newest, _ := s.Resolve("@0")
	if newest.ID != d.ID {
		t.Fatalf("@0 is %s, want the newest %s", newest.ID, d.ID)
	}
}

func TestLockWaitsAndHonoursContext(t *testing.T) {
	t.Parallel()
	s := project(t)
	l, err := s.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Lock(c); err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("second lock: %v", err)
	}
	f, _ := os.Open(s.lockPath())
	defer f.Close()
	if durable.TryLock(f) == nil {
		t.Error("lock not held")
	}
}

// TestGCOverLayerChains: deleting checkpoints in the middle and at the base
// of a layer chain leaves every other one restoring exactly, and frees the
// archives nothing reads any more.
func TestGCOverLayerChains(t *testing.T) {
	t.Parallel()
	s := project(t)
	big := make([]byte, 256<<10)
	rand.New(rand.NewSource(1)).Read(big) // incompressible: the layers never outgrow the base
	write(t, s.Project, "big.bin", string(big))
	var cps []*Checkpoint
	want := map[string]string{}
	for i := 0; i < 8; i++ {
		if i != 5 {
			write(t, s.Project, fmt.Sprintf("f%d.txt", i), fmt.Sprint(i)) // a new file, kept from then on
		}
		write(t, s.Project, "edit.txt", strings.Repeat("v", i+1)) // changed each time
		if i == 4 {
			os.Remove(filepath.Join(s.Project, "f1.txt"))
		}
		c := save(t, s, SaveOptions{})
		if wantFiles := map[bool]int{true: 1, false: 2}[i == 5]; i > 0 && (!c.Snapshot.Layer || c.Snapshot.LayerFiles != wantFiles) {
			t.Fatalf("checkpoint %d: %+v, want a layer of %d files", i, c.Snapshot, wantFiles)
		}
		cps = append(cps, c)
		want[c.ID] = c.Snapshot.TreeHash
	}
	// Remove the base and three in the middle; the layer of 5 holds only an
	// edit.txt that 6 replaced, so nothing reads it any more.
	for _, i := range []int{0, 3, 4, 5} {
		if err := s.remove(cps[i]); err != nil {
			t.Fatal(err)
		}
		delete(want, cps[i].ID)
	}
	if _, err := s.sweepLayers(); err != nil {
		t.Fatal(err)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("validate after gc: %v %v", probs, err)
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		hash := want[id]
		c, err := s.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.restoreTree(ctx, c, false); err != nil {
			t.Fatalf("restore %s: %v", id, err)
		}
		res, err := s.Save(ctx, SaveOptions{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Snapshot.TreeHash != hash {
			t.Fatalf("restore of %s after gc gives tree %s, want %s", id, res.Snapshot.TreeHash, hash)
		}
	}
	if _, err := os.Stat(filepath.Join(s.layersDir(), cps[5].ID+".tar.gz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the layer nothing reads (%s) was not swept", cps[5].ID)
	}
	if _, err := os.Stat(filepath.Join(s.layersDir(), cps[3].ID+".tar.gz")); err != nil {
		t.Errorf("the layer a survivor still reads (%s) was swept: %v", cps[3].ID, err)
	}
}

// TestHookdFindsTheStore: rewind-hook finds the store (and its config.json)
// where Init made it, in both modes.
func TestHookdFindsTheStore(t *testing.T) {
	for _, mode := range []layout.Mode{layout.ModeProject, layout.ModeGlobal} {
		home := t.TempDir()
		t.Setenv("HOME", home)
		t.Setenv("REWIND_HOME", filepath.Join(home, ".rewind"))
		dir := t.TempDir()
		s, _, err := Init(dir, mode)
		if err != nil {
			t.Fatal(err)
		}
		if got := hookd.StoreDir(dir); got != s.Dir {
			t.Errorf("%s mode: rewind-hook finds the store at %q, Init made it at %s", mode, got, s.Dir)
		}
	}
}

func TestSessionWrittenOnlyWhenItChanges(t *testing.T) {
	t.Parallel()
	s := project(t)
	req := hookd.Request{Version: 1, Event: "PreToolUse", Agent: "claude", ProjectDir: s.Project, SessionID: "s1", TranscriptPath: "/t.jsonl", Checkpoint: "none"}
	if _, err := s.Hook(ctx, req); err != nil {
		t.Fatal(err)
	}
	fi1, _ := os.Stat(s.path("session.json"))
	if _, err := s.Hook(ctx, req); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(s.path("session.json"))
	if !os.SameFile(fi1, fi2) {
		t.Error("session.json rewritten though nothing in it changed")
	}
	req.SessionID = "s2"
	s.Hook(ctx, req)
	if sess, _ := s.LastSession(); sess.SessionID != "s2" {
		t.Errorf("session.json not updated: %+v", sess)
	}
}

// TestHookdSkipsOnlyWhatRewindWould: rewind-hook answers a skip itself
// (hookd.Skip) only when Hook would answer the same and write nothing;
// every other case goes to Hook.
func TestHookdSkipsOnlyWhatRewindWould(t *testing.T) {
	s := envProject(t)
	base := hookd.Request{Version: 1, Event: "PreToolUse", Agent: "claude", ProjectDir: s.Project,
		SessionID: "s1", TranscriptPath: agentTranscript(t, "t.jsonl"), Checkpoint: "throttled", MinIntervalMS: 30_000}
	first := base
	first.Event, first.Checkpoint = "UserPromptSubmit", "always"
	if resp, err := s.Hook(ctx, first); err != nil || resp.Action != "checkpoint" {
		t.Fatalf("the first checkpoint: %+v %v", resp, err)
	}
	for _, tc := range []struct {
		name   string
		change func(r *hookd.Request)
		before func() // to the store, before asking
		skip   hookd.SkipReason
	}{
		{name: "same session, inside the interval", skip: "interval"},
		{name: "no session fields", change: func(r *hookd.Request) { r.SessionID, r.TranscriptPath = "", "" }, skip: "interval"},
		{name: "another agent named, session fields empty", change: func(r *hookd.Request) { r.Agent, r.SessionID, r.TranscriptPath = "droid", "", "" }, skip: "interval"},
		{name: "no checkpoint asked, same session", change: func(r *hookd.Request) { r.Checkpoint = "none" }, skip: "none"},
		{name: "no checkpoint asked, a new session", change: func(r *hookd.Request) { r.Checkpoint, r.SessionID = "none", "s3" }},
		// rewind may have something to tell the person at a prompt (a rewound session).
		{name: "a prompt, no checkpoint asked", change: func(r *hookd.Request) { r.Event, r.Checkpoint = "UserPromptSubmit", "none" }},
		{name: "retention asked", change: func(r *hookd.Request) { r.Checkpoint, r.Retention = "none", true }},
		{name: "a new session", change: func(r *hookd.Request) { r.SessionID = "s2" }},
		{name: "a new env file", change: func(r *hookd.Request) { r.EnvFile = "/tmp/env" }},
		{name: "interval passed", change: func(r *hookd.Request) { r.MinIntervalMS = 1 }, before: func() { time.Sleep(5 * time.Millisecond) }},
		{name: "always", change: func(r *hookd.Request) { r.Checkpoint = "always" }},
		{name: "session.json stale", before: func() {
			sess, _ := s.LastSession()
			sess.UpdatedAt = time.Now().Add(-2 * layout.SessionRefresh)
			writeJSON(s.path("session.json"), sess, 0o644)
		}},
	} {
		req := base
		if tc.change != nil {
			tc.change(&req)
		}
		if tc.before != nil {
			tc.before()
		}
		got := hookd.Skip(s.Dir, req, time.Now())
		sessBefore := read(t, s.path("session.json"))
		hsBefore := read(t, s.path("hook-state.json"))
		resp, err := s.Hook(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		wrote := read(t, s.path("session.json")) != sessBefore || read(t, s.path("hook-state.json")) != hsBefore
		rewindSkips := resp.Action == "skip" && resp.Reason == got && !wrote
		if got != tc.skip || got != "" && !rewindSkips {
			t.Errorf("%s: hookd skips %v (want %v); rewind answered %+v, wrote %v", tc.name, got, tc.skip, resp, wrote)
		}
		// Back to the base session for the next case.
		if _, err := s.Hook(ctx, hookd.Request{Version: 1, Event: "PreToolUse", Agent: "claude", ProjectDir: s.Project,
			SessionID: base.SessionID, TranscriptPath: base.TranscriptPath, Checkpoint: "none"}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUnchangedTranscriptSharesItsFile: a capture of a transcript that has
// not grown since the newest capture links that capture's file instead of
// adding an empty link to the chain; a grown one adds a link. Every
// checkpoint reconstructs exactly, also after gc merges the links.
func TestUnchangedTranscriptSharesItsFile(t *testing.T) {
	t.Parallel()
	s := project(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl")
	data := fixtureBytes(t)
	half := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	os.WriteFile(tp, data[:half], 0o644)
	a := save(t, s, SaveOptions{TranscriptPath: tp})
	b := save(t, s, SaveOptions{TranscriptPath: tp})
	c := save(t, s, SaveOptions{TranscriptPath: tp})
	fa, _ := os.Stat(filepath.Join(a.Dir, a.Transcript.Snapshot))
	fc, _ := os.Stat(filepath.Join(c.Dir, c.Transcript.Snapshot))
	if !os.SameFile(fa, fc) || c.Transcript.Base != a.Transcript.Base || c.Transcript.Chain != 1 {
		t.Fatalf("unchanged transcript: %+v, want %s's file shared, chain 1", c.Transcript, a.ID)
	}
	os.WriteFile(tp, data, 0o644)
	d := save(t, s, SaveOptions{TranscriptPath: tp})
	if d.Transcript.Base != c.ID || d.Transcript.Chain != 2 || d.Transcript.BaseOffset != int64(half) {
		t.Fatalf("grown transcript: %+v, want a link over %s at %d, chain 2", d.Transcript, c.ID, half)
	}
	want := map[string][]byte{a.ID: data[:half], b.ID: data[:half], c.ID: data[:half], d.ID: data}
	check := func(when string) {
		t.Helper()
		for id, w := range want {
			cp, err := s.Load(id)
			if err != nil {
				t.Fatal(err)
			}
			if got := inflate(t, s, cp); !bytes.Equal(got, w) {
				t.Fatalf("%s: %s reconstructs %d bytes, want %d", when, id, len(got), len(w))
			}
		}
	}
	check("before gc")
	for _, gone := range []*Checkpoint{a, c} {
		if err := s.remove(gone); err != nil {
			t.Fatal(err)
		}
		delete(want, gone.ID)
		check("after removing " + gone.ID)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("validate: %v %v", probs, err)
	}
}

// TestBackInAgentCountsTheRunningPrompt: rewind back run by the agent inside a prompt counts
// that prompt as the newest whether or not the agent has written its line yet (Claude Code
// writes it late in interactive mode, early with -p): the prompt hook's checkpoint tells where
// the file ended when it was submitted.
func TestBackInAgentCountsTheRunningPrompt(t *testing.T) {
	t.Parallel()
	data := fixtureBytes(t)
	for _, written := range []bool{false, true} {
		t.Run(fmt.Sprint("written=", written), func(t *testing.T) {
			s := project(t)
			tp := filepath.Join(t.TempDir(), "1cbbde27-5fcc-4652-9047-4142f5f1912c.jsonl")
			os.WriteFile(tp, data, 0o644)
			ts := turns(t, tp) // oldest first
			last := ts[len(ts)-1]
			// The previous prompt's hook, then the running one's: the file ends before its line.
			os.WriteFile(tp, data[:ts[len(ts)-2].PromptOffset], 0o644)
			write(t, s.Project, "state.txt", "before the previous prompt")
			save(t, s, SaveOptions{TranscriptPath: tp, Trigger: Trigger{Kind: "hook", Event: "UserPromptSubmit", Prompt: ts[len(ts)-2].Text}})
			os.WriteFile(tp, data[:last.PromptOffset], 0o644)
			write(t, s.Project, "state.txt", "before the running prompt")
			save(t, s, SaveOptions{TranscriptPath: tp, Trigger: Trigger{Kind: "hook", Event: "UserPromptSubmit", Prompt: last.Text}})
			if written {
				os.WriteFile(tp, data, 0o644)
			}
			write(t, s.Project, "state.txt", "during the running prompt")

			for n, want := range map[int]string{1: "before the running prompt", 2: "before the previous prompt"} {
				res, err := s.Back(ctx, BackOptions{N: n, Both: true, TranscriptPath: tp, InAgent: true})
				if err != nil {
					t.Fatalf("back %d: %v", n, err)
				}
				if got := read(t, filepath.Join(s.Project, "state.txt")); got != want {
					t.Errorf("back %d --both: tree %q, want %q", n, got, want)
				}
				var kept []string
				for _, tu := range turns(t, res.Fork.Path) {
					kept = append(kept, tu.Text)
				}
				if len(kept) != len(ts)-n || kept[len(kept)-1] != ts[len(ts)-n-1].Text {
					t.Errorf("back %d: the fork keeps the prompts %q, want the first %d", n, kept, len(ts)-n)
				}
				// The same cut whether the prompt was written or not: before its queue lines.
				if f := read(t, res.Fork.Path); n == 1 && (!strings.HasPrefix(f, string(data[:last.Offset])) || strings.Count(f[last.Offset:], "\n") != 1) {
					t.Errorf("back 1: the fork is not the bytes before the prompt and its queue lines, plus its title line")
				}
				if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestBackBothAfterDroidRewritesItsFirstLine: droid exec fires no prompt hook, so the only
// checkpoint before the prompt is SessionStart's — taken before Droid rewrites its
// session_start line (0.225.2 adds a field once the hook has run). back 1 --both still finds it.
func TestBackBothAfterDroidRewritesItsFirstLine(t *testing.T) {
	t.Parallel()
	s := project(t)
	data, err := os.ReadFile(fixtures.Path("droid/realclient-droid0.225.2-tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.IndexByte(data, '\n') + 1
	tp := filepath.Join(t.TempDir(), "1cbbde27-5fcc-4652-9047-4142f5f1912c.jsonl")
	os.WriteFile(tp, data[:first], 0o644) // what SessionStart's hook sees
	write(t, s.Project, "state.txt", "at session start")
	save(t, s, SaveOptions{TranscriptPath: tp, Agent: "droid", Trigger: Trigger{Kind: "hook", Event: "SessionStart"}})
	rewritten := append(bytes.Replace(data[:first], []byte("}\n"), []byte(`,"isSessionTitleManuallySet":false}`+"\n"), 1), data[first:]...)
	os.WriteFile(tp, rewritten, 0o644)
	write(t, s.Project, "state.txt", "after the prompt")

	res, err := s.Back(ctx, BackOptions{N: 1, Both: true, TranscriptPath: tp})
	if err != nil {
		t.Fatalf("back 1 --both after Droid rewrote its first line: %v", err)
	}
	if got := read(t, filepath.Join(s.Project, "state.txt")); got != "at session start" {
		t.Errorf("tree %q, want the session start's", got)
	}
	if res.Fork == nil {
		t.Error("no fork")
	}
}

// TestSwappedID: the view of a Gemini fork as its parent reads every window as the whole file
// with the id swapped back, also where an occurrence is cut by the window's edges.
func TestSwappedID(t *testing.T) {
	t.Parallel()
	from, to := "aaaaaaaa-bbbb", "11111111-2222"
	src := `{"sessionId":"` + from + `"}` + "\n" + `{"$set":{"sessionId":"` + from + `"}}` + "\n" + from
	want := strings.ReplaceAll(src, from, to)
	r := swappedID{rest: strings.NewReader(src), from: []byte(from), to: []byte(to)}
	for off := 0; off <= len(src); off++ {
		for n := 0; off+n <= len(src)+3; n++ {
			p := make([]byte, n)
			m, err := r.ReadAt(p, int64(off))
			end := min(off+n, len(src))
			if string(p[:m]) != want[off:end] || (off+n > len(src)) != (err == io.EOF) && n > 0 {
				t.Fatalf("ReadAt(%d bytes at %d) = %q, %v; want %q", n, off, p[:m], err, want[off:end])
			}
		}
	}
}

// TestCopilotForkFolderMovesWhole: a Copilot fork is a session folder of its own (events.jsonl
// and workspace.yaml); undo-restore moves the folder aside whole — a folder left with only
// workspace.yaml would list as an empty session — and redo brings it back.
func TestCopilotForkFolderMovesWhole(t *testing.T) {
	t.Parallel()
	s := project(t)
	data, err := os.ReadFile(fixtures.Path("copilot/realclient-copilot1.0.102-2-prompts-resumed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	states := filepath.Join(t.TempDir(), "session-state")
	src := filepath.Join(states, "b163310b-74e2-4813-a2c7-b847535f1a4b", "events.jsonl")
	os.MkdirAll(filepath.Dir(src), 0o700)
	os.WriteFile(src, data, 0o600)
	os.WriteFile(filepath.Join(filepath.Dir(src), "workspace.yaml"), []byte("id: b163310b-74e2-4813-a2c7-b847535f1a4b\nname: x\n"), 0o600)
	res, err := s.Back(ctx, BackOptions{N: 1, TranscriptPath: src})
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Dir(res.Fork.Path)
	if _, err := os.Stat(filepath.Join(folder, "workspace.yaml")); err != nil {
		t.Fatalf("the fork's folder has no workspace.yaml: %v", err)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(folder); err == nil {
		t.Errorf("undo-restore left the fork's folder %s", folder)
	}
	if _, err := s.Redo(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"events.jsonl", "workspace.yaml"} {
		if _, err := os.Stat(filepath.Join(folder, name)); err != nil {
			t.Errorf("redo did not bring back %s: %v", name, err)
		}
	}
}

// TestFirstSaveWrittenAsItWalks: the first checkpoint's archive and
// manifest are written as the tree is walked (snap.CreateOptions.ManifestTo): its
// manifest reads back as the tree, counts every file and symlink as added
// (as a diff against nothing does), validates, and restores the tree.
func TestFirstSaveWrittenAsItWalks(t *testing.T) {
	t.Parallel()
	s := project(t)
	for i := range 30 {
		write(t, s.Project, fmt.Sprintf("d%d/f%02d.go", i%4, i), strings.Repeat("x", i*50))
	}
	os.Symlink("main.go", filepath.Join(s.Project, "link"))
	c := save(t, s, SaveOptions{})
	m, err := snap.ReadManifest(c.ManifestPath())
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.TreeHash != c.Snapshot.TreeHash || len(m.Entries) != c.Snapshot.Files+c.Snapshot.Dirs+c.Snapshot.Symlinks {
		t.Fatalf("manifest holds %d entries (%s), metadata says %+v", len(m.Entries), m.Header.TreeHash, c.Snapshot)
	}
	changes, err := snap.Diff(context.Background(), snap.DiffOptions{From: &snap.Manifest{}, To: m})
	if err != nil {
		t.Fatal(err)
	}
	added := 0
	for _, ch := range changes {
		if ch.Kind != "dir" {
			added++
		}
	}
	if c.Changes.Added != added || added != 32 || c.Changes.Modified+c.Changes.Deleted != 0 {
		t.Fatalf("changes %+v, a diff against nothing adds %d", c.Changes, added)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("validate: %+v %v", probs, err)
	}
	before := read(t, filepath.Join(s.Project, "d1/f05.go"))
	os.RemoveAll(filepath.Join(s.Project, "d1"))
	if _, err := snap.Restore(ctx, s.Project, "", snap.RestoreOptions{Manifest: m}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(s.Project, "d1/f05.go")); got != before {
		t.Fatalf("restored d1/f05.go holds %q, want %q", got, before)
	}
}

// TestFullSaveOverACheckpoint: a --full save over a checkpoint is written
// as the tree is walked, as the first is, and counts its changes against
// that checkpoint (the two manifests read side by side); one over a damaged
// chain says why it is full and counts every file added.
func TestFullSaveOverACheckpoint(t *testing.T) {
	t.Parallel()
	s := project(t)
	for i := range 20 {
		write(t, s.Project, fmt.Sprintf("d%d/f%02d.go", i%3, i), strings.Repeat("y", i*40+1))
	}
	first := save(t, s, SaveOptions{})
	write(t, s.Project, "d0/f00.go", "changed")
	write(t, s.Project, "d9/new.go", "new")
	os.Remove(filepath.Join(s.Project, "d1/f01.go"))
	full := save(t, s, SaveOptions{Full: true})
	want := Changes{Added: 1, Deleted: 1, Modified: 1, Since: first.ID}
	if full.Changes != want || full.Snapshot.Layer || full.Snapshot.FullBecause != "" {
		t.Fatalf("--full save: changes %+v (want %+v), layer %v, full because %q", full.Changes, want, full.Snapshot.Layer, full.Snapshot.FullBecause)
	}
	m, err := snap.ReadManifest(full.ManifestPath())
	if err != nil || m.Header.Parent != "" || m.Header.TreeHash != full.Snapshot.TreeHash {
		t.Fatalf("--full save's manifest: %v (parent %q)", err, m.Header.Parent)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("validate: %+v %v", probs, err)
	}
	os.Truncate(filepath.Join(s.layersDir(), full.ID+".tar.gz"), 100)
	write(t, s.Project, "d0/f00.go", "changed again")
	over := save(t, s, SaveOptions{})
	if over.Snapshot.FullBecause == "" || over.Snapshot.Layer || over.Changes.Added != over.Snapshot.Files+over.Snapshot.Symlinks || over.Changes.Since != full.ID {
		t.Fatalf("save over a damaged chain: full because %q, layer %v, changes %+v", over.Snapshot.FullBecause, over.Snapshot.Layer, over.Changes)
	}
}

// TestSaveOverAChainThatTakesNoMoreLayers: once a chain's layers outgrow
// its full snapshot, the next save is a full checkpoint, written as the
// walk goes like the first, its changes counted against the newest.
func TestSaveOverAChainThatTakesNoMoreLayers(t *testing.T) {
	t.Parallel()
	s := project(t)
	write(t, s.Project, "a.txt", "a\n")
	save(t, s, SaveOptions{})
	big := make([]byte, 256<<10)
	rand.New(rand.NewSource(1)).Read(big) // (incompressible: the layer outgrows the base)
	write(t, s.Project, "big.bin", string(big))
	layer := save(t, s, SaveOptions{})
	if !layer.Snapshot.Layer {
		t.Fatalf("the second save is not a layer: %+v", layer.Snapshot)
	}
	write(t, s.Project, "a.txt", "changed\n")
	full := save(t, s, SaveOptions{})
	want := Changes{Modified: 1, Since: layer.ID}
	if full.Snapshot.Layer || full.Snapshot.Depth != 0 || full.Snapshot.FullBecause != "" || full.Changes != want {
		t.Fatalf("save over an outgrown chain: %+v, changes %+v (want %+v)", full.Snapshot, full.Changes, want)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("validate: %+v %v", probs, err)
	}
	os.Remove(filepath.Join(s.Project, "big.bin"))
	if _, err := s.restoreTree(ctx, full, false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(s.Project, "big.bin")); got != string(big) {
		t.Fatal("restore of the full checkpoint did not bring big.bin back")
	}
}
