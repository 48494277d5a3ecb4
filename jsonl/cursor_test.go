package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"rewind.dev/internal/fixtures"
)

func TestCursorMissingFile(t *testing.T) {
	tr, err := Open(filepath.Join(t.TempDir(), "not-yet.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tr.Cursor(context.Background(), CursorOptions{CountLines: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.ByteOffsetEnd != 0 || c.Lines == nil || *c.Lines != 0 || c.PrefixSHA256 != c.TailSHA256 {
		t.Errorf("cursor of a missing file: %+v", c)
	}
	turns, err := tr.Turns(context.Background(), 0)
	if err != nil || len(turns) != 0 {
		t.Errorf("turns of a missing file: %v, %v", turns, err)
	}
}

func TestCursorIgnoresIncompleteLine(t *testing.T) {
	d, _ := LookupDialect("claude")
	full := `{"type":"user","uuid":"u1","message":{"content":"hi"}}` + "\n" + `{"type":"last-prompt"}` + "\n"
	data := full + `{"type":"assistant","uuid":"u2"`
	tr, _ := New("", strings.NewReader(data), int64(len(data)), d)
	c, err := tr.Cursor(context.Background(), CursorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.ByteOffsetEnd != int64(len(full)) || c.LastEventID != "u1" || c.Lines != nil {
		t.Errorf("cursor %+v", c)
	}
}

func TestVerify(t *testing.T) {
	d, _ := LookupDialect("claude")
	base := strings.Repeat(`{"type":"assistant","uuid":"a","message":{}}`+"\n", 4000) // > 2×64 KiB
	cursorOf := func(data string) Cursor {
		tr, _ := New("", strings.NewReader(data), int64(len(data)), d)
		c, err := tr.Cursor(context.Background(), CursorOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := cursorOf(base)
	mid := len(base) / 2
	tests := []struct {
		name    string
		data    string
		extends bool
		reason  string
	}{
		{"unchanged", base, true, "unchanged"},
		{"incomplete line appended", base + `{"type"`, true, "unchanged"},
		{"appended", base + "{}\n", true, "appended"},
		{"shorter", base[:len(base)-10], false, "shorter"},
		{"prefix differs", "X" + base[1:], false, "prefix_differs"},
		{"tail differs", base[:len(base)-5] + "X" + base[len(base)-4:], false, "tail_differs"},
		{"not a line boundary", base[:len(base)-1] + "X\n", false, "not_line_boundary"},
		// A change in the middle, outside both windows, is not seen: the cost bound's price.
		{"middle change unseen", base[:mid] + "Y" + base[mid+1:], true, "unchanged"},
	}
	for _, tt := range tests {
		tr, _ := New("", strings.NewReader(tt.data), int64(len(tt.data)), d)
		v, err := tr.Verify(c)
		if err != nil {
			t.Fatal(err)
		}
		if v.Extends != tt.extends || v.Reason != tt.reason {
			t.Errorf("%s: %+v, want %v %s", tt.name, v, tt.extends, tt.reason)
		}
	}
	missing, _ := Open(filepath.Join(t.TempDir(), "gone.jsonl"), d)
	if v, _ := missing.Verify(c); v.Extends || v.Reason != "missing" {
		t.Errorf("missing file: %+v", v)
	}
	if v, _ := missing.Verify(cursorOf("")); !v.Extends {
		t.Errorf("missing file against an empty cursor: %+v", v)
	}
}

func TestParseCursor(t *testing.T) {
	good, _ := json.Marshal(Cursor{ByteOffsetEnd: 5, PrefixSHA256: strings.Repeat("a", 64), TailSHA256: strings.Repeat("b", 64)})
	tests := []struct {
		in string
		ok bool
	}{
		{string(good), true},
		{`{"type":"cursor",` + string(good[1:]), true},
		{`{}`, false},
		{`{"byte_offset_end":-1}`, false},
		{`nope`, false},
		{`{"byte_offset_end":1,"prefix_sha256":"zz","tail_sha256":"zz"}`, false},
	}
	for _, tt := range tests {
		if _, err := ParseCursor([]byte(tt.in)); (err == nil) != tt.ok {
			t.Errorf("ParseCursor(%s) error %v, want ok=%v", tt.in, err, tt.ok)
		}
	}
}

func TestAt(t *testing.T) {
	ctx := context.Background()
	path := fixtures.Path("claude/realclient-cc2.1.197-4-prompts-resumed.jsonl")
	tr, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	starts := lineStarts(t, path)
	cut, err := tr.At(ctx, "562d5ac1-e873-4603-88b7-23757f1726ed") // line 29
	if err != nil {
		t.Fatal(err)
	}
	if cut != (EventCut{Offset: starts[29], EventsKept: 28, EventsRemoved: 8}) {
		t.Errorf("At = %+v", cut)
	}
	if _, err := tr.At(ctx, "no-such-id"); !errorsIs(err, ErrEventNotFound) {
		t.Errorf("missing id: %v", err)
	}
	// An id that appears only as a parentUuid is not the event.
	if _, err := tr.At(ctx, "a361bc34-80a6-432e-befe-72511e8584d2"); err != nil {
		t.Errorf("At(line 10's uuid): %v", err)
	}
	codex, _ := Open(fixtures.Path("codex/SANITIZED-agent-sessions-codex-small-compacted.jsonl"), nil)
	defer codex.Close()
	if _, err := codex.At(ctx, "x"); !errorsIs(err, ErrNoEventIDs) {
		t.Errorf("codex At: %v", err)
	}
}

func TestDetect(t *testing.T) {
	for _, f := range fixtureFiles(t) {
		head, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head = head[:min(len(head), HashWindow)]
		want := filepath.Base(filepath.Dir(f))
		// Content alone, with no path hint.
		if got := Detect("", head); got.Agent != want || got.Confidence <= 0.5 {
			t.Errorf("%s: detected %s (%v), want %s", filepath.Base(f), got.Agent, got.Confidence, want)
		}
	}
	paths := map[string]string{
		"/home/u/.claude/projects/-home-u-demo/ab.jsonl":                         "claude",
		"/home/u/.factory/sessions/-home-u-demo/ab.jsonl":                        "droid",
		"/home/u/.codex/sessions/2026/01/02/rollout-x-ab.jsonl":                  "codex",
		"/home/u/.pi/agent/sessions/--home-u--/2026_ab.jsonl":                    "pi",
		"/home/u/.copilot/session-state/ab/events.jsonl":                         "copilot",
		"/home/u/.gemini/tmp/demo/chats/session-2026-11-23T14-06-c5615351.jsonl": "gemini",
	}
	for p, want := range paths {
		if got := Detect(p, nil); got.Agent != want || got.Confidence > 0.5 {
			t.Errorf("Detect(%s) = %+v, want %s with low confidence", p, got, want)
		}
	}
	if got := Detect("/tmp/x.jsonl", []byte("garbage\n{}\n")); got.Dialect != nil {
		t.Errorf("garbage detected as %+v", got)
	}
	// Unknown agent: turns fail with ErrUnknownAgent, cursor still works.
	data := "{\"hello\":1}\n"
	tr, err := New("", strings.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Turns(context.Background(), 0); !errorsIs(err, ErrUnknownAgent) {
		t.Errorf("turns of an unknown agent: %v", err)
	}
	if c, err := tr.Cursor(context.Background(), CursorOptions{}); err != nil || c.ByteOffsetEnd != int64(len(data)) {
		t.Errorf("cursor of an unknown agent: %+v %v", c, err)
	}
}

func TestTitle(t *testing.T) {
	ctx := context.Background()
	claude, _ := LookupDialect("claude")
	data := strings.Join([]string{
		`{"type":"ai-title","aiTitle":"ai one"}`,
		`{"type":"custom-title","customTitle":"mine"}`,
		`{"type":"ai-title","aiTitle":"ai two"}`,
	}, "\n") + "\n"
	tr, _ := New("", strings.NewReader(data), int64(len(data)), claude)
	if ti, ok, err := tr.Title(ctx); err != nil || !ok || ti.Text != "mine" {
		t.Errorf("claude title %+v %v %v, want the custom title", ti, ok, err)
	}
	if got := claude.ForkTitle("mine"); got != "[Fork] mine" || claude.ForkTitle(got) != got {
		t.Errorf("ForkTitle: %q", got)
	}
	line, ok, err := claude.ForkTitleLine(`[Fork] "q" <b>`, "S1", nil)
	want := `{"type":"custom-title","customTitle":"[Fork] \"q\" <b>","sessionId":"S1"}` + "\n" // compact, as Claude Code writes it
	if err != nil || !ok || string(line) != want {
		t.Errorf("ForkTitleLine = %q %v %v, want %q", line, ok, err, want)
	}
	gemini, _ := LookupDialect("gemini")
	line, ok, err = gemini.ForkTitleLine("[Fork] Create a.txt", "S1", nil)
	if want := `{"$set":{"summary":"[Fork] Create a.txt"}}` + "\n"; err != nil || !ok || string(line) != want {
		t.Errorf("gemini ForkTitleLine = %q %v %v, want %q (Gemini CLI's own summary line)", line, ok, err, want)
	}
	droid, _ := LookupDialect("droid")
	if _, ok, _ := droid.ForkTitleLine("x", "y", nil); ok || droid.Title.Fork.Method != "rewrite_first_line" || droid.Title.Fork.Field != "title" {
		t.Errorf("droid fork title: %+v", droid.Title.Fork)
	}
	names := DialectNames()
	if !sort.StringsAreSorted(names) || len(names) < 5 {
		t.Errorf("dialects: %q, want them sorted", names)
	}
	for _, n := range names {
		if d, err := LookupDialect(n); err != nil || d.Name != n {
			t.Errorf("LookupDialect(%s) = %v, %v", n, d, err)
		}
	}
	if _, err := LookupDialect("emacs"); err == nil {
		t.Error("LookupDialect(emacs) succeeded")
	}
}

// TestLocateAfterFirstLineRewrite: Droid rewrites its session_start line after the SessionStart
// hook has taken a checkpoint (0.225.2 adds "isSessionTitleManuallySet":false), so the bytes the
// cursor hashed are no longer a prefix; Locate still finds where the cursor's data ends, moved by
// the line's change in length — and only when nothing after that line changed.
func TestLocateAfterFirstLineRewrite(t *testing.T) {
	data, err := os.ReadFile(fixtures.Path("droid/realclient-droid0.225.2-tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	droid, _ := LookupDialect("droid")
	first := bytes.IndexByte(data, '\n') + 1
	cursorAt := func(b []byte) Cursor {
		tr, err := New("", bytes.NewReader(b), int64(len(b)), droid)
		if err != nil {
			t.Fatal(err)
		}
		c, err := tr.Cursor(context.Background(), CursorOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	atStart, atEnd := cursorAt(data[:first]), cursorAt(data)
	if atStart.FirstLine != int64(first) || atStart.BodySHA256 == "" {
		t.Fatalf("cursor at the first line: %+v", atStart)
	}
	rewritten := append(bytes.Replace(data[:first], []byte("}\n"), []byte(`,"isSessionTitleManuallySet":false}`+"\n"), 1), data[first:]...)
	shift := int64(len(rewritten) - len(data))
	tr, _ := New("", bytes.NewReader(rewritten), int64(len(rewritten)), droid)
	for _, tc := range []struct {
		name string
		c    Cursor
		want int64
	}{
		{"taken at SessionStart", atStart, int64(first) + shift},
		{"taken at the end", atEnd, int64(len(data)) + shift},
	} {
		if v, _ := tr.Verify(tc.c); v.Extends {
			t.Errorf("%s: Verify still extends after the rewrite", tc.name)
		}
		if off, ok, err := tr.Locate(tc.c); err != nil || !ok || off != tc.want {
			t.Errorf("%s: Locate = %d, %v, %v; want %d", tc.name, off, ok, err, tc.want)
		}
	}
	// A change after the first line is a different conversation.
	cut := bytes.IndexByte(rewritten, '\n') + 1
	changed := append(append([]byte(nil), rewritten[:cut]...), bytes.Replace(rewritten[cut:], []byte("hello"), []byte("HELLO"), 1)...)
	tr, _ = New("", bytes.NewReader(changed), int64(len(changed)), droid)
	if _, ok, _ := tr.Locate(atEnd); ok {
		t.Error("Locate found a cursor whose bytes after the first line changed")
	}
}

// TestTitleScanAgrees: the block scan for title literals finds the same title as judging every
// line, on every fixture.
func TestTitleScanAgrees(t *testing.T) {
	for _, f := range fixtureFiles(t) {
		tr, err := Open(f, nil)
		if err != nil || tr.Dialect == nil || len(tr.Dialect.Title.Sources) == 0 {
			continue
		}
		got, gotOK, err := tr.Title(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var want Title
		wantOK, best := false, -1
		tr.Lines(0, func(l Line) bool {
			o := parseObject(Clean(l.Data))
			for _, s := range tr.Dialect.Title.Sources {
				if o != nil && s.Rank >= best && s.Match.holds(o, nil) && o.str(s.Field) != "" {
					want, wantOK, best = Title{Text: o.str(s.Field), Offset: l.Offset, Field: s.Field}, true, s.Rank
				}
			}
			return true
		})
		if got != want || gotOK != wantOK {
			t.Errorf("%s: Title = %+v %v, every line judged: %+v %v", filepath.Base(f), got, gotOK, want, wantOK)
		}
		tr.Close()
	}
}

// TestLiteralPass: one pass for several literals finds every start of each that a search for
// each alone finds, before the limit (a block's end) — across overlaps, literals that hold the
// shared run more than once, and literals that share too little (a pass each).
func TestLiteralPass(t *testing.T) {
	data := []byte(`{"type":"custom-title"}{"type":"ai-title"}"ai-title""custom-title"-title"-title-title"xx"ai-title"`)
	for _, f := range fixtureFiles(t) {
		b, _ := os.ReadFile(f)
		data = append(data, b...)
	}
	for _, lits := range [][]string{
		{`"custom-title"`, `"ai-title"`},
		{`"ai-title"`},
		{`"type"`, `"summary"`},
		{`-title-title"`, `"ai-title"`},
	} {
		var bs [][]byte
		for _, l := range lits {
			bs = append(bs, []byte(l))
		}
		passes := literalPasses(bs)
		if len(lits) == 2 && lits[1] == `"ai-title"` && len(passes) != 1 {
			t.Errorf("%q: %d passes, want one", lits, len(passes))
		}
		for _, limit := range []int{len(data), len(data) / 2, 17, 20, 21, 0} {
			var want []int
			for _, l := range bs {
				for i := 0; ; {
					j := bytes.Index(data[i:], l)
					if j < 0 || i+j >= limit {
						break
					}
					want = append(want, i+j)
					i += j + 1
				}
			}
			var got []int
			for _, p := range passes {
				p.find(data, limit, func(i int) bool { got = append(got, i); return true })
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, slices.Compact(want)) {
				t.Errorf("%q limit %d: found %d starts, want %d", lits, limit, len(got), len(want))
			}
		}
	}
}
