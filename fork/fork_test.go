package fork

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/fixtures"
	"rewind.dev/jsonl"
)

// place copies a fixture into a fresh directory under name, with mode 0600 like Claude Code's.
func place(t *testing.T, fixture, name string) string {
	t.Helper()
	data, err := os.ReadFile(fixtures.Path(fixture))
	if err != nil {
		t.Fatalf("fixture: %v (see internal/fixtures/SOURCES.md)", err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// back1 is the boundary before the last prompt, as rewind-jsonl back 1 finds it.
func back1(t *testing.T, path string) int64 {
	t.Helper()
	tr, err := jsonl.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	turn, err := tr.Back(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return turn.Offset
}

// cursorAt is the cursor a checkpoint would have recorded with the transcript ending at offset.
func cursorAt(t *testing.T, data []byte, offset int64) Checkpoint {
	t.Helper()
	tr, err := jsonl.New("", bytes.NewReader(data[:offset]), offset, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tr.Cursor(context.Background(), jsonl.CursorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return Checkpoint{Offset: c.ByteOffsetEnd, PrefixSHA256: c.PrefixSHA256, TailSHA256: c.TailSHA256}
}

func statsEvents(t *testing.T, data []byte) int64 {
	t.Helper()
	tr, err := jsonl.New("", bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tr.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' && isEvent(data[bytes.LastIndexByte(data, '\n')+1:]) {
		s.Events++ // Stats leaves out an unterminated last line; a fork terminates and keeps it
	}
	return s.Events
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func gzipMembers(t *testing.T, parts ...[]byte) string {
	t.Helper()
	var buf bytes.Buffer
	for _, p := range parts {
		zw := gzip.NewWriter(&buf)
		zw.Write(p)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "transcript.jsonl.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCreateClaude forks real Claude transcripts before their last prompt: the fork is the
// exact prefix plus one custom-title line for the new id, beside the source, with its mode; the
// source is unchanged.
func TestCreateClaude(t *testing.T) {
	for _, fx := range []string{
		"claude/realclient-cc2.1.197-4-prompts-resumed.jsonl",
		"claude/entire-b15d3b-interrupt-local-commands.jsonl",
		"claude/entire-26dcd5-image-paste-long-lines.jsonl",
		"claude/SYNTHETIC-agent-sessions-schema-catalog-2.1.x.jsonl",
		"claude/entire-c639a4-slash-command-small.jsonl",
	} {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			src := place(t, fx, "0b7c1a9e-0000-4000-8000-000000000001.jsonl")
			before, _ := os.ReadFile(src)
			off := back1(t, src)
			f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: off}})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(f.Path)
			if f.Path != filepath.Join(filepath.Dir(src), f.SessionID+".jsonl") || f.Method != MethodPrefixCopy || f.Type != "fork" {
				t.Errorf("fork = %+v", f)
			}
			if !bytes.HasPrefix(got, before[:off]) || f.ReplacedFirstLine != nil {
				t.Fatalf("fork does not start with the prefix (replaced first line %q)", f.ReplacedFirstLine)
			}
			var title struct{ Type, CustomTitle, SessionID string }
			rest := got[off:]
			if f.Title == "" && len(rest) == 0 && len(f.Warnings) == 1 {
				// Nothing kept names the fork (the cut is before the only prompt): no title line.
			} else if err := json.Unmarshal(rest, &title); err != nil || bytes.Count(rest, []byte("\n")) != 1 || title.Type != "custom-title" || title.SessionID != f.SessionID || title.CustomTitle != f.Title || !strings.HasPrefix(f.Title, "[Fork] ") {
				t.Errorf("after the prefix: %q (title %q)", rest, f.Title)
			}
			if f.Bytes != int64(len(got)) || f.EventsKept != statsEvents(t, before[:off]) {
				t.Errorf("bytes %d events %d, want %d %d", f.Bytes, f.EventsKept, len(got), statsEvents(t, before[:off]))
			}
			if fi, _ := os.Stat(f.Path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v", fi.Mode())
			}
			after, _ := os.ReadFile(src)
			if !bytes.Equal(before, after) {
				t.Error("source changed")
			}
			if len(dirNames(t, filepath.Dir(src))) != 2 {
				t.Errorf("left behind: %v", dirNames(t, filepath.Dir(src)))
			}
		})
	}
}

// TestClaudeTitle: the title comes from the newest custom-title kept (a fork of a fork keeps
// its one prefix), else the source's title when given (a fork of a fork cut before its title
// line), else the newest prompt kept; --no-title writes the bare prefix.
func TestClaudeTitle(t *testing.T) {
	const (
		prompt = `{"type":"user","message":{"role":"user","content":"fix   the\nbug"},"uuid":"u1","sessionId":"s"}` + "\n"
		answer = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]},"uuid":"a1","sessionId":"s"}` + "\n"
		titled = `{"type":"custom-title","customTitle":"[Fork] earlier","sessionId":"s"}` + "\n"
		ai     = `{"type":"ai-title","aiTitle":"Fixing a bug","sessionId":"s"}` + "\n"
	)
	tests := []struct {
		name, data, source string
		noTitle            bool
		want               string
	}{
		{"newest prompt", prompt + answer, "", false, "[Fork] fix the bug"},
		{"ai-title", prompt + ai + answer, "", false, "[Fork] Fixing a bug"},
		{"custom-title beats ai-title, marked once", prompt + titled + ai + answer, "", false, "[Fork] earlier"},
		{"the source's title beats the prompt", prompt + answer, "[Fork] earlier", false, "[Fork] earlier"},
		{"a kept title beats the source's", prompt + titled + answer, "[Fork] later", false, "[Fork] earlier"},
		{"no title", prompt + answer, "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), ".claude", "projects", "-p")
			os.MkdirAll(dir, 0o755)
			src := filepath.Join(dir, "s.jsonl")
			os.WriteFile(src, []byte(tt.data), 0o600)
			f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: int64(len(tt.data))}, NoTitle: tt.noTitle, SourceTitle: tt.source})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(f.Path)
			if f.Title != tt.want {
				t.Errorf("title %q, want %q", f.Title, tt.want)
			}
			if tt.noTitle && string(got) != tt.data {
				t.Errorf("--no-title fork is not the bare prefix: %q", got)
			}
		})
	}
}

// TestCreateDroid checks a Droid fork against the real Droid session files: the session_start
// line gets the new id and a [Fork] title (once), every other byte is the prefix, and the
// settings sidecar is copied for the new id.
func TestCreateDroid(t *testing.T) {
	const id = "1cbbde27-5fcc-4652-9047-4142f5f1912c"
	src := place(t, "droid/realclient-droid0.225.2-tools.jsonl", id+".jsonl")
	side, _ := os.ReadFile(fixtures.Path("droid/realclient-droid0.225.2-tools.settings.json"))
	os.WriteFile(filepath.Join(filepath.Dir(src), id+".settings.json"), side, 0o600)
	before, _ := os.ReadFile(src)
	off := int64(len(before))

	f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: off}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(f.Path)
	nl := bytes.IndexByte(before, '\n')
	gotNL := bytes.IndexByte(got, '\n')
	if !bytes.Equal(got[gotNL:], before[nl:]) {
		t.Error("lines after session_start differ from the source")
	}
	var start map[string]any
	if err := json.Unmarshal(got[:gotNL], &start); err != nil {
		t.Fatal(err)
	}
	wantTitle := "[Fork] write droid.txt=hello; bash echo bye > bye.txt"
	if start["type"] != "session_start" || start["id"] != f.SessionID || start["title"] != wantTitle || f.Title != wantTitle || start["cwd"] != "/home/user/demo" {
		t.Errorf("session_start = %v, fork = %+v", start, f)
	}
	// Every other field and the key order are kept: only the two values differ.
	wantLine := strings.Replace(strings.Replace(string(before[:nl]), id, f.SessionID, 1), `"title":"write`, `"title":"[Fork] write`, 1)
	if string(got[:gotNL]) != wantLine {
		t.Errorf("first line\n got %s\nwant %s", got[:gotNL], wantLine)
	}
	if string(f.ReplacedFirstLine) != string(before[:nl+1]) {
		t.Errorf("ReplacedFirstLine = %q, want the source's first line", f.ReplacedFirstLine)
	}
	gotSide, err := os.ReadFile(filepath.Join(filepath.Dir(src), f.SessionID+".settings.json"))
	if err != nil || !bytes.Equal(gotSide, side) {
		t.Errorf("sidecar not copied: %v", err)
	}
	if f.EventsKept != statsEvents(t, before) {
		t.Errorf("events %d, want %d", f.EventsKept, statsEvents(t, before))
	}

	// A fork of the fork keeps the one prefix.
	f2, err := Create(context.Background(), CreateOptions{From: f.Path, Checkpoint: Checkpoint{Offset: int64(len(got))}})
	if err != nil {
		t.Fatal(err)
	}
	if f2.Title != wantTitle {
		t.Errorf("fork of fork title %q, want %q", f2.Title, wantTitle)
	}
}

// TestCreateSnapshot: when the live file no longer holds the checkpointed prefix, the fork is
// inflated from the snapshot (several gzip members, or a chain of files); a snapshot that does
// not match the cursor, or neither source, is an error that leaves nothing behind.
func TestCreateSnapshot(t *testing.T) {
	src := place(t, "claude/realclient-cc2.1.197-4-prompts-resumed.jsonl", "s.jsonl")
	orig, _ := os.ReadFile(src)
	off := back1(t, src)
	cp := cursorAt(t, orig, off)
	// The agent rewrote the file since the checkpoint (e.g. compaction): the prefix differs.
	changed := append([]byte(`{"type":"summary","summary":"x"}`+"\n"), orig...)
	os.WriteFile(src, changed, 0o600)
	half := len(orig) / 2

	tests := []struct {
		name      string
		snapshots func() []string
		cp        Checkpoint
		wantErr   string
	}{
		{"two members", func() []string { return []string{gzipMembers(t, orig[:half], orig[half:])} }, cp, ""},
		{"chain of two files", func() []string { return []string{gzipMembers(t, orig[:100]), gzipMembers(t, orig[100:])} }, cp, ""},
		{"offset only", func() []string { return []string{gzipMembers(t, orig)} }, Checkpoint{Offset: off}, ""},
		{"too short", func() []string { return []string{gzipMembers(t, orig[:off-10])} }, cp, "fewer than the offset"},
		{"wrong transcript", func() []string { return []string{gzipMembers(t, changed)} }, cp, "does not hold the checkpointed bytes"},
		{"not gzip", func() []string {
			p := filepath.Join(t.TempDir(), "x.gz")
			os.WriteFile(p, orig, 0o600)
			return []string{p}
		}, cp, "not gzip"},
		{"no snapshot", func() []string { return nil }, cp, "no longer holds the checkpointed bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := dirNames(t, filepath.Dir(src))
			f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: tt.cp, Snapshots: tt.snapshots()})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if after := dirNames(t, filepath.Dir(src)); len(after) != len(before) {
					t.Errorf("left behind: %v", after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(f.Path)
			if f.Method != MethodSnapshot || !bytes.HasPrefix(got, orig[:off]) || !bytes.Contains(got[off:], []byte(`"custom-title"`)) {
				t.Errorf("fork %+v: %q", f, got[off:])
			}
			if f.EventsKept != statsEvents(t, orig[:off]) {
				t.Errorf("events %d", f.EventsKept)
			}
			os.Remove(f.Path)
		})
	}
	// The live file gone: the snapshot still serves.
	os.Remove(src)
	f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: cp, Snapshots: []string{gzipMembers(t, orig)}})
	if err != nil || f.Method != MethodSnapshot {
		t.Fatalf("missing source: %+v, %v", f, err)
	}
	_, err = Create(context.Background(), CreateOptions{From: src, Checkpoint: cp})
	var ce *ChangedError
	if !errors.As(err, &ce) || ce.Reason != "missing" || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing source, no snapshot: %v", err)
	}
}

// TestCreateEdges: the trailing newline, cuts that are not at a line end, hash mismatches,
// --out, and refusing to clobber.
func TestCreateEdges(t *testing.T) {
	const two = `{"type":"user","message":{"role":"user","content":"a"},"uuid":"1"}` + "\n" + `{"type":"assistant","uuid":"2"}`
	dir := t.TempDir()
	src := filepath.Join(dir, "t.jsonl")
	os.WriteFile(src, []byte(two), 0o644)
	ctx := context.Background()
	line1 := int64(strings.IndexByte(two, '\n') + 1)

	f, err := Create(ctx, CreateOptions{From: src, Checkpoint: Checkpoint{Offset: int64(len(two))}, Agent: "claude", NoTitle: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(f.Path); string(got) != two+"\n" || f.EventsKept != 2 {
		t.Errorf("unterminated last line: %q, events %d", got, f.EventsKept)
	}
	for _, tc := range []struct {
		name string
		cp   Checkpoint
		want string
	}{
		{"mid-line", Checkpoint{Offset: 10}, "not at the end of a line"},
		{"past the end", Checkpoint{Offset: int64(len(two)) + 5}, "shorter"},
		{"prefix hash", Checkpoint{Offset: line1, PrefixSHA256: strings.Repeat("0", 64)}, "prefix hash"},
		{"tail hash", Checkpoint{Offset: line1, TailSHA256: strings.Repeat("0", 64)}, "tail hash"},
		{"bad hash", Checkpoint{Offset: line1, TailSHA256: "xyz"}, "not a hex SHA-256"},
		{"negative", Checkpoint{Offset: -1}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Create(ctx, CreateOptions{From: src, Checkpoint: tc.cp})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	out := filepath.Join(dir, "8d0c5f36-3f5e-4a8e-9d55-1a2b3c4d5e6f.jsonl")
	f, err = Create(ctx, CreateOptions{From: src, Checkpoint: Checkpoint{Offset: line1}, Out: out, Agent: "claude"})
	if err != nil || f.Path != out || f.SessionID != "8d0c5f36-3f5e-4a8e-9d55-1a2b3c4d5e6f" {
		t.Fatalf("--out: %+v %v", f, err)
	}
	if _, err := Create(ctx, CreateOptions{From: src, Checkpoint: Checkpoint{Offset: line1}, Out: out}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("clobbered --out: %v", err)
	}
	if _, err := Create(ctx, CreateOptions{From: src, Checkpoint: Checkpoint{Offset: line1}, Out: src}); err == nil {
		t.Error("wrote over the source")
	}
	if _, err := Create(ctx, CreateOptions{From: src, Checkpoint: Checkpoint{Offset: line1}, Agent: "nope"}); !errors.As(err, new(*AgentError)) {
		t.Errorf("unknown agent: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Create(cctx, CreateOptions{From: src, Checkpoint: Checkpoint{Offset: line1}}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	for _, n := range dirNames(t, dir) {
		if durable.IsTemp(n) {
			t.Errorf("temporary file left: %s", n)
		}
	}
}

// TestEventCounterAgreesWithJSONL: the fast count equals jsonl's Stats.Events on every
// fixture, however the bytes are split into writes.
func TestEventCounterAgreesWithJSONL(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtures.Dir(), "*", "*.jsonl"))
	if len(files) < 15 {
		t.Fatalf("only %d fixtures found", len(files))
	}
	for _, p := range files {
		data, _ := os.ReadFile(p)
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i+1]
		}
		want := statsEvents(t, data)
		for _, chunk := range []int{1 << 20, 4096, 7} {
			var c eventCounter
			for b := data; len(b) > 0; {
				n := min(chunk, len(b))
				c.Write(b[:n])
				b = b[n:]
			}
			if got := c.done(); got != want {
				t.Errorf("%s (writes of %d): %d events, jsonl says %d", filepath.Base(p), chunk, got, want)
			}
		}
	}
}

// TestCountingReaderAt: the events counted from a scan's reads (forward, overlapping, back,
// past a gap) and then from the bytes it left are those of the whole.
func TestCountingReaderAt(t *testing.T) {
	data, err := os.ReadFile(fixtures.Path("claude/realclient-cc2.1.197-4-prompts-resumed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	want := statsEvents(t, data)
	for _, reads := range [][][2]int64{
		nil,
		{{0, 100}, {50, 5000}, {10, 20}, {5000, 7}},
		{{0, 1000}, {2000, 100}, {900, 200}},
		{{size - 10, 10}, {0, size}},
		{{0, size + 100}},
	} {
		r := &countingReaderAt{ra: bytes.NewReader(data)}
		for _, rd := range reads {
			r.ReadAt(make([]byte, rd[1]), rd[0])
		}
		got, err := countEvents(context.Background(), r.ra, r.seen, size, &r.c)
		if err != nil || got != want {
			t.Errorf("reads %v: %d events (%v), want %d", reads, got, err, want)
		}
	}
}

// TestCreatePi: a pi fork (0.73.1) gets a new header id, sits in the source's folder named
// <UTC time>_<uuid7>.jsonl, and ends with a session_info line naming it and pointing at the line
// its conversation ends at: in a file with /tree branches the bytes before the prompt can end on
// a branch the conversation had left, and pi takes the last line as the leaf.
func TestCreatePi(t *testing.T) {
	src := place(t, "pi/realclient-pi0.73.1-tree-branches.jsonl", "2026-11-23T14-07-39-399Z_01a208bb-dd86-72e3-8209-b2ae8bd1fd78.jsonl")
	tr, err := jsonl.Open(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := tr.Back(context.Background(), 2) // before T5, which followed a branch summary
	tr.Close()
	if err != nil || turn.ParentID != "cd8e6cae" {
		t.Fatalf("back 2 = %+v, %v; want the prompt T5 whose parent is cd8e6cae", turn, err)
	}
	f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: turn.Offset, Leaf: turn.ParentID}})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(f.Path) != filepath.Dir(src) || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_`+f.SessionID+`\.jsonl$`).MatchString(filepath.Base(f.Path)) {
		t.Errorf("fork at %s, want <UTC time>_%s.jsonl beside the source", f.Path, f.SessionID)
	}
	if u, err := uuid.Parse(f.SessionID); err != nil || u.Version() != 7 {
		t.Errorf("session id %s: want a UUIDv7 as pi makes", f.SessionID)
	}
	data, _ := os.ReadFile(f.Path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if !strings.Contains(lines[0], `"id":"`+f.SessionID+`"`) || !strings.Contains(lines[0], `"cwd":`) {
		t.Errorf("header %s: want the fork's id and the source's cwd", lines[0])
	}
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"type":"session_info"`) || !strings.Contains(last, `"parentId":"cd8e6cae"`) || f.Title != "[Fork] T2 second prompt" || !strings.Contains(last, f.Title) {
		t.Errorf("last line %s (title %q): want a session_info naming the fork, with parentId cd8e6cae", last, f.Title)
	}
	// What pi will load: the path from the last line holds exactly T1 and T2.
	ft, err := jsonl.Open(f.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ft.Close()
	turns, _ := ft.Turns(context.Background(), 0)
	var got []string
	for _, tu := range turns {
		got = append(got, tu.Text)
	}
	if strings.Join(got, "|") != "T2 second prompt|T1 first prompt" {
		t.Errorf("the fork's conversation, newest first: %q", got)
	}
	orig, _ := os.ReadFile(fixtures.Path("pi/realclient-pi0.73.1-tree-branches.jsonl"))
	if now, _ := os.ReadFile(src); !bytes.Equal(now, orig) {
		t.Error("the source changed")
	}

	// Before the first prompt nothing of the agent's is kept: pi would write the session's
	// first lines again, so the fork is refused and nothing is left.
	tr, _ = jsonl.Open(src, nil)
	first, _ := tr.Back(context.Background(), 4)
	tr.Close()
	_, err = Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: first.Offset, Leaf: first.ParentID}})
	if !errors.As(err, new(*EmptyError)) || !strings.Contains(err.Error(), "reply of the agent") {
		t.Errorf("a fork before the first prompt: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(src)); len(entries) != 2 {
		t.Errorf("%d files beside the source, want it and the one fork", len(entries))
	}
}

// TestCreateCopilot: a Copilot fork (1.0.102) is a session folder of its own beside the
// source's, appearing whole: events.jsonl with the old session id replaced (session.start's
// sessionId is the session's identity; offsets do not move), and workspace.yaml with the new id
// and a single-quoted "[Fork] …" name (unquoted, the brackets make it a YAML list and Copilot
// fails to load the session).
func TestCreateCopilot(t *testing.T) {
	const old = "b163310b-74e2-4813-a2c7-b847535f1a4b"
	states := filepath.Join(t.TempDir(), "session-state")
	src := filepath.Join(states, old, "events.jsonl")
	for _, name := range []string{"events.jsonl", "workspace.yaml"} {
		data, err := os.ReadFile(fixtures.Path("copilot/" + old + "/" + name))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(src), 0o700)
		if err := os.WriteFile(filepath.Join(states, old, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := jsonl.Open(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := tr.Back(context.Background(), 1)
	tr.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: turn.Offset}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Path != filepath.Join(states, f.SessionID, "events.jsonl") {
		t.Errorf("fork at %s, want session-state/<new id>/events.jsonl", f.Path)
	}
	orig, _ := os.ReadFile(src)
	data, _ := os.ReadFile(f.Path)
	if want := strings.ReplaceAll(string(orig[:turn.Offset]), old, f.SessionID); string(data) != want {
		t.Errorf("the fork is not the prefix with the id replaced (%d bytes, want %d)", len(data), len(want))
	}
	if strings.Contains(string(data), old) || !strings.HasPrefix(string(data), `{"type":"session.start","data":{"sessionId":"`+f.SessionID+`"`) {
		t.Error("the old session id is still in the fork, or session.start does not name the fork")
	}
	ws, _ := os.ReadFile(filepath.Join(states, f.SessionID, "workspace.yaml"))
	if !strings.Contains(string(ws), "id: "+f.SessionID+"\n") || !strings.Contains(string(ws), "name: '[Fork] WRITE_A DIR=/tmp/cp-proj-q2'\n") ||
		!strings.Contains(string(ws), "cwd: /tmp/cp-proj-q2\n") || strings.Contains(string(ws), old) {
		t.Errorf("workspace.yaml:\n%s", ws)
	}
	if f.Title != "[Fork] WRITE_A DIR=/tmp/cp-proj-q2" {
		t.Errorf("title %q", f.Title)
	}
	entries, _ := os.ReadDir(states)
	if len(entries) != 2 {
		t.Errorf("session-state holds %d entries, want the source's folder and the fork's (no staging left)", len(entries))
	}
}

func TestSetYAMLScalar(t *testing.T) {
	doc := "id: a\nname: |-\n  two\n  lines\nuser_named: false\n"
	got := string(setYAMLScalar([]byte(doc), "name", "[Fork] it's"))
	if got != "id: a\nname: '[Fork] it''s'\nuser_named: false\n" {
		t.Errorf("replace a block scalar: %q", got)
	}
	if got := string(setYAMLScalar([]byte("id: a"), "name", "x")); got != "id: a\nname: 'x'\n" {
		t.Errorf("add a key: %q", got)
	}
}

// TestCreateOpenCode: an OpenCode fork (1.18.33) is the mirror's kept messages as an export
// under new ids (session, every message and part; parts point at their message's new id,
// assistants at their prompt's), titled "[Fork] …", loaded with `opencode import` from the
// session's folder, then checked by exporting it: import skips rows whose ids exist without a
// word, so a fork that lost rows is an error that says where the export is.
func TestCreateOpenCode(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.Mkdir(proj, 0o755)
	mirror := place(t, "opencode/realclient-opencode1.18.33-2-prompts-mirror.jsonl", "ses_df7272802ffeRDbCgpBljjEZLA.jsonl")
	info, _ := os.ReadFile(fixtures.Path("opencode/realclient-opencode1.18.33-2-prompts-mirror.session.json"))
	info = regexp.MustCompile(`"directory":"[^"]*"`).ReplaceAll(info, []byte(`"directory":`+strconv.Quote(proj)))
	os.WriteFile(strings.TrimSuffix(mirror, ".jsonl")+".session.json", info, 0o600)
	// A stand-in opencode: import keeps the file, export prints what was imported (with DROP
	// set, a session that lost its rows); both note the folder they ran in.
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	script := `#!/bin/sh
pwd > "$STATE/pwd"
case "$1" in
import) cp "$3" "$STATE/imported" ;;
export) if [ -n "$DROP" ]; then echo '{"info":{},"messages":[]}'; else cat "$STATE/imported"; fi ;;
esac
`
	os.WriteFile(filepath.Join(bin, "opencode"), []byte(script), 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("STATE", dir)

	tr, _ := jsonl.Open(mirror, nil)
	turn, err := tr.Back(context.Background(), 1)
	tr.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Create(context.Background(), CreateOptions{From: mirror, Checkpoint: Checkpoint{Offset: turn.Offset}})
	if err != nil {
		t.Fatal(err)
	}
	if pwd, _ := os.ReadFile(filepath.Join(dir, "pwd")); strings.TrimSpace(string(pwd)) != proj {
		t.Errorf("opencode ran in %q, want the session's folder %s", pwd, proj)
	}
	var exp struct {
		Info     map[string]any `json:"info"`
		Messages []struct {
			Info  map[string]any   `json:"info"`
			Parts []map[string]any `json:"parts"`
		} `json:"messages"`
	}
	data, _ := os.ReadFile(f.Path)
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatal(err)
	}
	if exp.Info["id"] != f.SessionID || !strings.HasPrefix(f.SessionID, "ses_") || exp.Info["title"] != "[Fork] A title" || f.Title != "[Fork] A title" {
		t.Errorf("session %v titled %v (fork %+v)", exp.Info["id"], exp.Info["title"], f)
	}
	orig, _ := os.ReadFile(mirror)
	if len(exp.Messages) != 3 || f.EventsKept != 3 {
		t.Fatalf("%d messages kept, want the 3 before the second prompt", len(exp.Messages))
	}
	users := map[string]bool{}
	for _, m := range exp.Messages {
		id := m.Info["id"].(string)
		if strings.Contains(string(orig), id) || !strings.HasPrefix(id, "msg_208d8") || m.Info["sessionID"] != f.SessionID {
			t.Errorf("message %s: not a new id keeping the old time, or not in the fork's session", id)
		}
		if m.Info["role"] == "user" {
			users[id] = true
		} else if !users[m.Info["parentID"].(string)] {
			t.Errorf("assistant %s points at %v, not at the fork's prompt", id, m.Info["parentID"])
		}
		for _, p := range m.Parts {
			if p["messageID"] != id || p["sessionID"] != f.SessionID || strings.Contains(string(orig), p["id"].(string)) {
				t.Errorf("part %v of %s: ids not remapped", p["id"], id)
			}
		}
	}

	// Cutting the mirror in place would change nothing in OpenCode: refused, the mirror kept.
	_, err = Truncate(context.Background(), TruncateOptions{From: mirror, BackupDir: t.TempDir(), Checkpoint: Checkpoint{Offset: turn.Offset, Agent: "opencode"}})
	if now, _ := os.ReadFile(mirror); !errors.As(err, new(*MirrorError)) || !bytes.Equal(now, orig) {
		t.Errorf("truncating an OpenCode mirror: %v", err)
	}

	t.Setenv("DROP", "1")
	_, err = Create(context.Background(), CreateOptions{From: mirror, Checkpoint: Checkpoint{Offset: turn.Offset}})
	var ie *ImportError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "the imported session holds") || ie.Out == "" {
		t.Errorf("an import that lost a message: %v", err)
	}
}

// TestCreateCodex: a Codex fork is the prefix before the prompt's turn, with the session id
// replaced on every line (Codex resumes a session as the id in its session_meta, and finds it
// by the id in the file name), in today's date folder under sessions/, named by the local time
// and the new id; other ids (the parent a native fork names) stay.
func TestCreateCodex(t *testing.T) {
	const oldID = "01a208ba-80f4-7df0-93a2-89e9f4e529e3"
	home := t.TempDir()
	dir := filepath.Join(home, ".codex", "sessions", "2026", "11", "20")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(fixtures.Path("codex/realclient-codex0.169.0-2-prompts-tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "rollout-2026-11-20T14-06-10-"+oldID+".jsonl")
	if err := os.WriteFile(src, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	cut := back1(t, src)
	before := time.Now()
	f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: cut}})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := uuid.Parse(f.SessionID); err != nil || u.Version() != 7 {
		t.Errorf("session id %s: want a UUIDv7 as Codex makes", f.SessionID)
	}
	day := filepath.Join(home, ".codex", "sessions", before.Format("2006/01/02"))
	name := regexp.MustCompile(`^rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-` + f.SessionID + `\.jsonl$`)
	if filepath.Dir(f.Path) != day || !name.MatchString(filepath.Base(f.Path)) {
		t.Errorf("fork at %s, want %s/rollout-<local time>-%s.jsonl", f.Path, day, f.SessionID)
	}
	data, _ := os.ReadFile(f.Path)
	if want := bytes.ReplaceAll(orig[:cut], []byte(oldID), []byte(f.SessionID)); !bytes.Equal(data, want) {
		t.Errorf("the fork is not the prefix before the turn with the id replaced (%d bytes, want %d)", len(data), len(want))
	}
	if bytes.Contains(data, []byte(oldID)) || bytes.Count(data, []byte(f.SessionID)) < 3 {
		t.Errorf("the old id is left, or the new one is missing (%d times)", bytes.Count(data, []byte(f.SessionID)))
	}
	if first, _, _ := bytes.Cut(data, []byte("\n")); dottedString(first, "payload.id") != f.SessionID {
		t.Errorf("session_meta.payload.id is not the fork's id")
	}
	ft, _ := jsonl.Open(f.Path, nil)
	turns, _ := ft.Turns(context.Background(), 0)
	ft.Close()
	if len(turns) != 1 || turns[0].Text != "P1 write a.txt please" {
		t.Errorf("the fork's prompts: %+v, want only the first", turns)
	}
	if now, _ := os.ReadFile(src); !bytes.Equal(now, orig) {
		t.Error("the source changed")
	}
	d, _ := jsonl.LookupDialect("codex")
	if got := d.ResumeCommand(f.SessionID); got != "codex resume "+f.SessionID {
		t.Errorf("resume command %q", got)
	}
	// The title goes into Codex's index of names, where `codex resume "[Fork] …"` finds it
	// (its picker lists names from a database only Codex's app-server writes); the user's
	// last index line, left without its newline, is completed first.
	index := filepath.Join(home, ".codex", "session_index.jsonl")
	if f.Title != "[Fork] P1 write a.txt please" {
		t.Errorf("title %q", f.Title)
	}
	idx, _ := os.ReadFile(index)
	var entry struct {
		ID, ThreadName, UpdatedAt string
	}
	if err := json.Unmarshal(idx, &struct {
		ID         *string `json:"id"`
		ThreadName *string `json:"thread_name"`
		UpdatedAt  *string `json:"updated_at"`
	}{&entry.ID, &entry.ThreadName, &entry.UpdatedAt}); err != nil || entry.ID != f.SessionID || entry.ThreadName != f.Title || entry.UpdatedAt == "" {
		t.Errorf("session_index.jsonl: %s (%v)", idx, err)
	}
	os.WriteFile(index, append(idx, `{"id":"x","thread_name":"mine","updated_at":"2026-01-01T00:00:00Z"}`...), 0o600)

	// A native fork names its parent in session_meta (forked_from_id, history_base): a fork of
	// it keeps that reference, since the parent holds its history.
	nb, err := os.ReadFile(fixtures.Path("codex/realclient-codex0.169.0-native-fork.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	native := filepath.Join(dir, "rollout-2026-11-20T14-08-28-01a208bc-9f3e-71b0-85e1-60f8da48ee39.jsonl")
	if err := os.WriteFile(native, nb, 0o600); err != nil {
		t.Fatal(err)
	}
	nf, err := Create(context.Background(), CreateOptions{From: native, Checkpoint: Checkpoint{Offset: back1(t, native)}})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := os.ReadFile(nf.Path)
	first, _, _ := bytes.Cut(head, []byte("\n"))
	if dottedString(first, "payload.id") != nf.SessionID || dottedString(first, "payload.forked_from_id") != oldID ||
		dottedString(first, "payload.history_base.thread_id") != oldID {
		t.Errorf("the native fork's fork lost its parent: %.300s", first)
	}
	idx, _ = os.ReadFile(index)
	if lines := strings.Split(string(idx), "\n"); len(lines) != 4 || lines[3] != "" || !strings.Contains(lines[2], nf.SessionID) || !strings.HasSuffix(lines[1], `"mine","updated_at":"2026-01-01T00:00:00Z"}`) {
		t.Errorf("session_index.jsonl after a second fork:\n%s", idx)
	}

	// A fork written elsewhere (--out) is not in Codex's folders: no index line, no title.
	out := filepath.Join(t.TempDir(), "f.jsonl")
	of, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: cut}, Out: out})
	if err != nil || of.Title != "" {
		t.Errorf("fork with --out: title %q, %v", of.Title, err)
	}
	if again, _ := os.ReadFile(index); !bytes.Equal(again, idx) {
		t.Error("a fork with --out wrote an index line")
	}
}

// TestCreateGemini forks real Gemini CLI 0.61.0 chat files: beside the source as
// session-<UTC minute>-<tag>.jsonl, the tag never the new session's id8 (Gemini deletes every
// file sharing the id8 of a session it drops, such as a resume's stub); the new id everywhere the
// old one was, $set.sessionId lines included (a later one would win); a $set.summary title line.
func TestCreateGemini(t *testing.T) {
	const oldID = "c5615351-a120-4894-9be3-b50ff65db739"
	src := place(t, "gemini/realclient-gemini0.61.0-2-prompts-resumed.jsonl", "session-2026-11-23T14-06-c5615351.jsonl")
	orig, _ := os.ReadFile(src)
	off := back1(t, src)
	if off != 3388 {
		t.Fatalf("back 1 at %d, want 3388 (before the resume's lines, L12)", off)
	}
	for _, snapshot := range []bool{false, true} {
		cp := Checkpoint{Offset: off}
		var snaps []string
		if snapshot {
			cp = cursorAt(t, orig, off)
			snaps = []string{gzipMembers(t, orig[:1000], orig[1000:])}
			os.WriteFile(src, append([]byte("{}\n"), orig...), 0o600) // the live file no longer holds the prefix
		}
		f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: cp, Snapshots: snaps})
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`^session-\d{4}-\d\d-\d\dT\d\d-\d\d-([0-9a-f]{8})\.jsonl$`).FindStringSubmatch(filepath.Base(f.Path))
		if filepath.Dir(f.Path) != filepath.Dir(src) || m == nil {
			t.Fatalf("fork at %s, want session-<minute>-<tag>.jsonl beside the source", f.Path)
		}
		if m[1] == f.SessionID[:8] || m[1] == oldID[:8] {
			t.Errorf("fork tag %s repeats a session's id8", m[1])
		}
		if u, err := uuid.Parse(f.SessionID); err != nil || u.Version() != 4 {
			t.Errorf("session id %q: want a UUIDv4 as Gemini makes", f.SessionID)
		}
		got, _ := os.ReadFile(f.Path)
		title := `{"$set":{"summary":"[Fork] Create a.txt please @write a.txt hello"}}` + "\n"
		want := strings.ReplaceAll(string(orig[:off]), oldID, f.SessionID) + title
		if string(got) != want || f.Title != "[Fork] Create a.txt please @write a.txt hello" {
			t.Errorf("snapshot %v: fork (title %q):\n%s\nwant\n%s", snapshot, f.Title, got, want)
		}
		if f.Method != map[bool]string{false: MethodPrefixCopy, true: MethodSnapshot}[snapshot] {
			t.Errorf("method %s", f.Method)
		}
		os.Remove(f.Path)
	}

	// A fork of a fork cuts before its newest prompt, after a resume whose $set.sessionId
	// (L13) it keeps: that line names the new id too. Its title builds on the session's.
	src2 := place(t, "gemini/realclient-gemini0.61.0-fork-resumed-twice.jsonl", "session-2026-11-23T14-06-c0c33660.jsonl")
	f, err := Create(context.Background(), CreateOptions{From: src2, Checkpoint: Checkpoint{Offset: back1(t, src2)}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(f.Path)
	if bytes.Contains(got, []byte("244055c5-5320-439b-bf46-ffbe5755e7e4")) || bytes.Count(got, []byte(`"sessionId":"`+f.SessionID+`"`)) != 2 {
		t.Errorf("the old session id is left in the fork, or the new one is missing:\n%s", got)
	}
	if f.Title != "[Fork] [Fork2] mismatched id8" {
		t.Errorf("title %q", f.Title)
	}
	ft, _ := jsonl.Open(f.Path, nil)
	turns, _ := ft.Turns(context.Background(), 0)
	ft.Close()
	if len(turns) != 2 || turns[0].Text != "P3 on fork2 @write f2.txt two" {
		t.Errorf("the fork's prompts: %+v", turns)
	}

	// Before the first prompt nothing would be left that Gemini resumes (and it deletes such a
	// file when it next starts): refused, nothing left behind.
	os.WriteFile(src, orig, 0o600)
	before := dirNames(t, filepath.Dir(src))
	_, err = Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: 0}})
	if !errors.As(err, new(*EmptyError)) || !strings.Contains(err.Error(), "prompt of the session") {
		t.Errorf("a fork before the first prompt: %v", err)
	}
	if after := dirNames(t, filepath.Dir(src)); len(after) != len(before) {
		t.Errorf("left behind: %v", after)
	}
}

// TestCreateDryRun: a dry run says where the fork would go and writes nothing; it still refuses
// a transcript that no longer holds the bytes.
func TestCreateDryRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".claude", "projects", "-p")
	os.MkdirAll(dir, 0o755)
	src := filepath.Join(dir, "s.jsonl")
	data := `{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","sessionId":"s"}` + "\n"
	os.WriteFile(src, []byte(data), 0o600)
	f, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: int64(len(data))}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(f.Path) != dir || filepath.Base(f.Path) != f.SessionID+".jsonl" || f.Method != MethodPrefixCopy {
		t.Errorf("dry run = %+v", f)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("a dry run wrote %d files", len(ents)-1)
	}
	if _, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: int64(len(data)) + 10}, DryRun: true}); err == nil {
		t.Error("a dry run past the end: no error")
	}
}
