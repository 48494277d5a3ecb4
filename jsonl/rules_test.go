package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/internal/fixtures"
)

// lineStarts returns the start offset of each line (1-based: starts[1] is line 1).
func lineStarts(t *testing.T, path string) []int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	starts := []int64{-1, 0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, int64(i+1))
		}
	}
	return starts
}

// TestHandReadPrompts pins prompts read by hand in each kind of fixture: the cut line (before
// the prompt's file-history-snapshot / queue-operation lines), the prompt line and its text.
func TestHandReadPrompts(t *testing.T) {
	tests := []struct {
		file                string
		count               int
		n                   int
		cutLine, promptLine int
		text                string
	}{
		// Queue lines (enqueue, dequeue) written before the prompt: cut before them.
		{"claude/realclient-cc2.1.197-4-prompts-resumed.jsonl", 4, 1, 27, 29, "write notes.txt=third; bash rm src/main.go"},
		{"claude/realclient-cc2.1.197-4-prompts-resumed.jsonl", 4, 4, 1, 3, "write src/main.go=package main"},
		// The file-history-snapshot of L5 is L1, past the snapshot of the hook-blocked L6.
		{"claude/entire-00c9e2-hook-blocked-prompt-interrupt.jsonl", 3, 3, 1, 5, "fix tests"},
		{"claude/entire-00c9e2-hook-blocked-prompt-interrupt.jsonl", 3, 2, 7, 8, "fix tests"},
		{"claude/entire-00c9e2-hook-blocked-prompt-interrupt.jsonl", 3, 1, 31, 32, "fix the test, the code is right"},
		// Image-only prompt, 19 prompts with slash-command prompts counted.
		{"claude/entire-26dcd5-image-paste-long-lines.jsonl", 19, 16, 58, 59, "[image]"},
		{"claude/entire-26dcd5-image-paste-long-lines.jsonl", 19, 1, 172, 173, "<command-message>superpowers:execute-plan"},
		// /ide local command (L114-117) is no turn; the next prompt's snapshot is L118.
		{"claude/entire-26dcd5-image-paste-long-lines.jsonl", 19, 8, 118, 119, "I'm wondering if commitWithMetadataGemini"},
		// Task notifications are not turns.
		{"claude/entire-7e72a8-task-notification.jsonl", 7, 6, 63, 64, "Given the logic is complex"},
		// A prompt starting with white space is a turn.
		{"claude/entire-7662d7-microcompact.jsonl", 9, 4, 176, 177, "2. User committed"},
		{"claude/entire-a7f087-bash-mode-input.jsonl", 5, 4, 70, 71, "ah, we didn't have a local branch"},
		{"claude/entire-b15d3b-interrupt-local-commands.jsonl", 4, 2, 47, 51, "linting is failing now"},
		{"claude/entire-c98835-ide-opened-file-queue-op.jsonl", 1, 1, 1, 3, "<ide_opened_file>"},
		{"claude/entire-de2255-exit-resume-branch-midsession.jsonl", 3, 3, 7, 8, "ok, works, can you now tell me"},
		{"claude/spotter-subagent-parent-main.jsonl", 2, 1, 70, 71, "create the beads"},
		// Droid: the context- system reminder before the prompt belongs to it.
		{"droid/realclient-droid0.225.2-tools.jsonl", 1, 1, 2, 3, "write droid.txt=hello; bash echo bye > bye.txt"},
		{"droid/SYNTHETIC-agent-sessions-session-store-schema-drift.jsonl", 1, 1, 2, 2, "Do the thing"},
		{"droid/SYNTHETIC-agent-sessions-session-store-large.jsonl", 2, 1, 7, 7, "Step 2"},
		{"codex/SANITIZED-agent-sessions-codex-small-compacted.jsonl", 3, 3, 2, 4, "List the files"},
		// Codex 0.169.0: the prompt is a response_item user message (user.text); the cut goes
		// before its turn's lines: thread_settings_applied, task_started (same turn_id),
		// turn_context — and in the first turn the developer and environment messages.
		{"codex/realclient-codex0.169.0-2-prompts-tools.jsonl", 2, 1, 20, 23, "P2 edit a.txt then shell"},
		{"codex/realclient-codex0.169.0-2-prompts-tools.jsonl", 2, 2, 2, 8, "P1 write a.txt please"},
		// A compaction before the prompt (summary, compacted, world_state…) is inside its turn.
		{"codex/realclient-codex0.169.0-compaction.jsonl", 2, 1, 15, 27, "Q8NEXT second"},
		// An image prompt: <image …></image> wrapper text before the typed text.
		{"codex/realclient-codex0.169.0-image-prompt.jsonl", 1, 1, 2, 8, "look at this image"},
		// A native fork (history_base) holds only its own turns; a TUI turn's developer message.
		{"codex/realclient-codex0.169.0-native-fork.jsonl", 2, 1, 13, 18, "Q3TOOL tui check"},
		{"pi/pi-mono-large-session-v1.jsonl", 88, 24, 789, 789, "/them"},
		{"pi/copilot-session-viewer-pi-v3-demo-TRANSCRIBED.jsonl", 1, 1, 4, 4, "Read .copilot/skills/demo-greeter/SKILL.md"},
		{"copilot/SYNTHETIC-agent-sessions-events-subdir-v1.jsonl", 1, 1, 2, 2, "List the files"},
		// Copilot 1.0.102: a resumed -p session; the second process's session.resume and the
		// prompt's own hook lines belong to the prompt.
		{"copilot/realclient-copilot1.0.102-2-prompts-resumed.jsonl", 2, 1, 31, 38, "EDIT_A DIR=/tmp/cp-proj-q2"},
		{"copilot/realclient-copilot1.0.102-2-prompts-resumed.jsonl", 2, 2, 2, 8, "WRITE_A DIR=/tmp/cp-proj-q2"},
		// OpenCode 1.18.33, as the bridge mirrors it: one line per message.
		{"opencode/realclient-opencode1.18.33-2-prompts-mirror.jsonl", 2, 1, 4, 4, "bravo: change notes.txt and delete gone.txt"},
		{"opencode/realclient-opencode1.18.33-2-prompts-mirror.jsonl", 2, 2, 1, 1, "alpha: write notes.txt"},
		// pi 0.73.1: two prompts, the second resumed.
		{"pi/realclient-pi0.73.1-2-prompts-tools.jsonl", 2, 1, 8, 8, "P2: edit a.txt and run the shell"},
		// pi's /tree: T3 (L8) and T4 (L10) lie on branches the conversation left; the path from
		// the last line is T6 ← session_info ← T5 ← branch_summary ← T2 ← T1.
		{"pi/realclient-pi0.73.1-tree-branches.jsonl", 4, 1, 16, 16, "T6 resumed"},
		{"pi/realclient-pi0.73.1-tree-branches.jsonl", 4, 2, 13, 13, "T5 after summary"},
		{"pi/realclient-pi0.73.1-tree-branches.jsonl", 4, 3, 6, 6, "T2 second prompt"},
		{"pi/realclient-pi0.73.1-tree-branches.jsonl", 4, 4, 4, 4, "T1 first prompt"},
		// Gemini CLI 0.61.0: the metadata line and $set.messages before the first prompt belong
		// to it; a resume in the same minute writes the metadata line and $set.messages of its
		// stub into the file, then $set.sessionId and $set.messages (L12-15): cut before them.
		// The model's turn (L5) is written again with its tool calls (L7).
		{"gemini/realclient-gemini0.61.0-2-prompts-resumed.jsonl", 2, 1, 12, 16, "Now edit and clean up"},
		{"gemini/realclient-gemini0.61.0-2-prompts-resumed.jsonl", 2, 2, 1, 3, "Create a.txt please"},
		// A compression at the start of the resumed run (L16-17) goes with the prompt too.
		{"gemini/realclient-gemini0.61.0-compress-auto.jsonl", 2, 1, 12, 18, "Second prompt"},
		// A resume in a later minute appends only $set.sessionId and $set.messages; the fork's
		// title line (L12) stays before the cut.
		{"gemini/realclient-gemini0.61.0-fork-resumed-twice.jsonl", 3, 1, 24, 26, "P4 on fork2 again"},
		{"gemini/realclient-gemini0.61.0-fork-resumed-twice.jsonl", 3, 2, 13, 15, "P3 on fork2"},
		// /compress leaves no user record, only an info record (L25): no turn, no preamble.
		{"gemini/realclient-gemini0.61.0-tui-compress.jsonl", 3, 1, 27, 27, "Third prompt"},
		{"gemini/realclient-gemini0.61.0-tui-compress.jsonl", 3, 2, 12, 16, "Second prompt"},
		// The native /rewind back to P2 (L35 $rewindTo, L36 $set.messages) took P2 and P3 out;
		// P2b was typed after it.
		{"gemini/realclient-gemini0.61.0-tui-rewind.jsonl", 2, 1, 36, 37, "P2b new"},
		{"gemini/realclient-gemini0.61.0-tui-rewind.jsonl", 2, 2, 1, 3, "P1 first"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			path := fixtures.Path(tt.file)
			tr, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			turns, err := tr.Turns(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(turns) != tt.count {
				t.Fatalf("%d prompts, want %d", len(turns), tt.count)
			}
			starts := lineStarts(t, path)
			tu := turns[tt.n-1]
			if tu.Offset != starts[tt.cutLine] || tu.PromptOffset != starts[tt.promptLine] {
				t.Errorf("turn %d: offset %d, prompt_offset %d; want line %d (%d), line %d (%d)",
					tt.n, tu.Offset, tu.PromptOffset, tt.cutLine, starts[tt.cutLine], tt.promptLine, starts[tt.promptLine])
			}
			if !strings.HasPrefix(tu.Text, tt.text) {
				t.Errorf("turn %d text %q, want prefix %q", tt.n, tu.Text, tt.text)
			}
		})
	}
}

// TestNoPromptInView: a slice taken mid-turn after compaction, and subagent files, have no
// human prompt: back must say so, not guess.
func TestNoPromptInView(t *testing.T) {
	for _, f := range []string{
		"claude/entire-e12c3e-compaction-v2.1.14.jsonl",
		"claude/spotter-subagent-agent-a2898e3-sidechain.jsonl",
		"claude/spotter-subagent-agent-acompact-e1f845.jsonl",
	} {
		tr, err := Open(fixtures.Path(f), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Back(context.Background(), 1); err == nil || !errorsIs(err, ErrFewerPrompts) {
			t.Errorf("%s: Back(1) error %v, want ErrFewerPrompts", f, err)
		}
		tr.Close()
	}
}

func claudeLine(fields string) string {
	return `{"type":"user","isSidechain":false,` + fields + `}`
}

// TestClassifyClaude table-tests the Claude prompt rule on hand-made lines.
func TestClassifyClaude(t *testing.T) {
	d, err := LookupDialect("claude")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		want Kind
		text string
	}{
		{claudeLine(`"uuid":"u1","message":{"role":"user","content":"hello"}`), KindPrompt, "hello"},
		{claudeLine(`"uuid":"u1","message":{"role":"user","content":"  hi"}`), KindPrompt, "hi"},
		{claudeLine(`"message":{"content":[{"type":"image","source":{}}]}`), KindPrompt, "[image]"},
		{claudeLine(`"message":{"content":[{"type":"text","text":"<command-message>x</command-message>"}]}`), KindPrompt, "<command-message>x</command-message>"},
		{claudeLine(`"isMeta":true,"message":{"content":"hello"}`), KindEvent, ""},
		{claudeLine(`"isCompactSummary":true,"message":{"content":"hello"}`), KindEvent, ""},
		{claudeLine(`"isVisibleInTranscriptOnly":true,"message":{"content":"hello"}`), KindEvent, ""},
		{`{"type":"user","isSidechain":true,"message":{"content":"hello"}}`, KindEvent, ""},
		{claudeLine(`"toolUseResult":{},"message":{"content":"hello"}`), KindEvent, ""},
		{claudeLine(`"message":{"content":[{"type":"tool_result","content":"x"},{"type":"text","text":"steer"}]}`), KindEvent, ""},
		{claudeLine(`"message":{"content":""}`), KindEvent, ""},
		{claudeLine(`"message":{"content":[]}`), KindEvent, ""},
		{claudeLine(`"message":{"content":"<local-command-stdout>ok</local-command-stdout>"}`), KindEvent, ""},
		{claudeLine(`"message":{"content":"<command-name>/exit</command-name>"}`), KindEvent, ""},
		{claudeLine(`"message":{"content":"<bash-input>ls</bash-input>"}`), KindEvent, ""},
		{claudeLine(`"message":{"content":"<task-notification> x"}`), KindEvent, ""},
		{claudeLine(`"message":{"content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}`), KindEvent, ""},
		{claudeLine(`"message":{"content":"Operation stopped by hook: nope"}`), KindEvent, ""},
		{claudeLine(`"message":{"content":"Caveat: The messages below were generated by the user"}`), KindEvent, ""},
		{claudeLine(`"thinkingMetadata":{},"permissionMode":"x","message":{"content":"<task-notification>"}`), KindEvent, ""},
		{`{"type":"assistant","message":{"content":"hello"}}`, KindEvent, ""},
		{"", KindBlank, ""},
		{" \r\x00\x00", KindBlank, ""},
		{"not json", KindGarbage, ""},
		{`{"type":"user",`, KindGarbage, ""},
		{"\x00\x00" + claudeLine(`"message":{"content":"after a hole"}`) + "\r", KindPrompt, "after a hole"},
		{`["type","user"]`, KindGarbage, ""},
	}
	for _, tt := range tests {
		ev := d.Classify([]byte(tt.line))
		if ev.Kind != tt.want || ev.Text != tt.text {
			t.Errorf("Classify(%q) = %v %q, want %v %q", tt.line, ev.Kind, ev.Text, tt.want, tt.text)
		}
	}
	long := claudeLine(`"message":{"content":"` + strings.Repeat("é", 500) + `"}`)
	if ev := d.Classify([]byte(long)); len([]rune(ev.Text)) != TextLimit {
		t.Errorf("long prompt text has %d characters, want %d", len([]rune(ev.Text)), TextLimit)
	}
}

// TestPreamble builds transcripts around one prompt and checks where the cut goes.
func TestPreamble(t *testing.T) {
	prompt := claudeLine(`"uuid":"P","message":{"content":"go"}`)
	fhs := func(id string) string {
		return `{"type":"file-history-snapshot","messageId":"` + id + `","snapshot":{}}`
	}
	enq := `{"type":"queue-operation","operation":"enqueue","content":"go"}`
	deq := `{"type":"queue-operation","operation":"dequeue"}`
	rem := `{"type":"queue-operation","operation":"remove"}`
	prog := `{"type":"progress","data":{"type":"hook_progress"}}`
	asst := `{"type":"assistant","uuid":"A","message":{"content":[{"type":"text","text":"ok"}]}}`
	tests := []struct {
		name  string
		lines []string
		cut   int // index of the line the cut goes before
	}{
		{"bare", []string{asst, prompt}, 1},
		{"queue", []string{asst, enq, deq, prompt}, 1},
		{"queue and snapshot", []string{asst, enq, deq, fhs("P"), prompt}, 1},
		{"snapshot with progress between", []string{asst, fhs("P"), prog, prog, prompt}, 1},
		{"snapshot of another message", []string{asst, fhs("X"), prompt}, 2},
		{"snapshot past a foreign snapshot", []string{asst, fhs("P"), fhs("X"), prog, prompt}, 1},
		{"queue remove is not the prompt's", []string{asst, enq, rem, prompt}, 3},
		{"queue not contiguous", []string{enq, deq, asst, prompt}, 3},
		{"snapshot too far", []string{fhs("P"), asst, asst, asst, asst, asst, asst, asst, asst, prompt}, 9},
		{"blank lines pass", []string{asst, enq, "", deq, prompt}, 1},
	}
	d, _ := LookupDialect("claude")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := strings.Join(tt.lines, "\n") + "\n"
			tr, err := New("", bytes.NewReader([]byte(data)), int64(len(data)), d)
			if err != nil {
				t.Fatal(err)
			}
			tu, err := tr.Back(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			want := int64(len(strings.Join(tt.lines[:tt.cut], "\n")))
			if tt.cut > 0 {
				want++
			}
			wantPrompt := int64(len(data) - len(prompt) - 1)
			if tu.Offset != want || tu.PromptOffset != wantPrompt {
				t.Errorf("offset %d prompt_offset %d, want %d %d", tu.Offset, tu.PromptOffset, want, wantPrompt)
			}
		})
	}
}

// TestTreeParent: in a tree dialect a turn names the line the conversation was at before the
// prompt, which a fork before it must end at — not the line before it in the file.
func TestTreeParent(t *testing.T) {
	tr, err := Open(fixtures.Path("pi/realclient-pi0.73.1-tree-branches.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	turns, err := tr.Turns(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tu := range turns {
		got = append(got, tu.ID+"<-"+tu.ParentID)
	}
	// T5's parent is the branch summary (L12), not T4's reply on L11 just above it.
	want := "25616d4d<-76364966 62e727a5<-cd8e6cae 6ff9206f<-9fe45ea6 517625ba<-41db97cd"
	if strings.Join(got, " ") != want {
		t.Errorf("turns (id<-parent), newest first:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestPromptMatchAny: a prompt rule with alternatives counts a line matching any of them (and
// Match besides); contains_any tests an array's elements.
func TestPromptMatchAny(t *testing.T) {
	d, err := parseDialect("t", []byte(`{"prompt":{
		"match":[{"field":"kind","equals":"msg"}],
		"match_any":[
			[{"field":"type","equals":"old_prompt"}],
			[{"field":"type","equals":"item"},{"field":"kinds","contains_any":["user.text","user.image"]}]
		],
		"content":["text"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		want Kind
	}{
		{`{"kind":"msg","type":"old_prompt","text":"a"}`, KindPrompt},
		{`{"kind":"msg","type":"item","kinds":["user.text"],"text":"b"}`, KindPrompt},
		{`{"kind":"msg","type":"item","kinds":["user.text","user.image"],"text":"c"}`, KindPrompt},
		{`{"kind":"msg","type":"item","kinds":["user.image"],"text":"d"}`, KindPrompt},
		{`{"kind":"msg","type":"item","kinds":["environments.environment_context"],"text":"e"}`, KindEvent},
		{`{"kind":"msg","type":"item","kinds":"user.text","text":"f"}`, KindEvent},
		{`{"kind":"msg","type":"item","text":"g"}`, KindEvent},
		{`{"kind":"other","type":"old_prompt","text":"h"}`, KindEvent},
		{`{"kind":"msg","type":"new_prompt","text":"i"}`, KindEvent},
	}
	for _, tt := range tests {
		if got := d.Classify([]byte(tt.line)).Kind; got != tt.want {
			t.Errorf("%s: %v, want %v", tt.line, got, tt.want)
		}
		// The cheap pre-test never rejects a prompt.
		if tt.want == KindPrompt && !d.mayBePrompt([]byte(tt.line)) {
			t.Errorf("%s: mayBePrompt false for a prompt", tt.line)
		}
	}
	if _, err := parseDialect("t", []byte(`{"prompt":{"match_any":[[]]}}`)); err == nil {
		t.Error("an empty match_any alternative was accepted")
	}
}

// TestCodexTurnStart: Codex 0.169's cut goes back to its turn's task_started, found by turn_id
// however far the compaction lines reach, and never past another prompt (a second prompt of
// the same turn keeps the first and its replies).
func TestCodexTurnStart(t *testing.T) {
	d, _ := LookupDialect("codex")
	prompt := func(turn, text string) string {
		return `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + text +
			`"}],"internal_chat_message_metadata_passthrough":{"turn_id":"` + turn + `","content_item_kinds":["user.text"]}}}`
	}
	started := func(turn string) string {
		return `{"type":"event_msg","payload":{"type":"task_started","turn_id":"` + turn + `"}}`
	}
	settings := `{"type":"event_msg","payload":{"type":"thread_settings_applied","thread_id":"S"}}`
	ctx := `{"type":"turn_context","payload":{"turn_id":"T2"}}`
	count := `{"type":"event_msg","payload":{"type":"token_count"}}`
	done := `{"type":"event_msg","payload":{"type":"task_complete","turn_id":"T1"}}`
	reply := `{"type":"response_item","payload":{"type":"message","role":"assistant","content":[]}}`
	compacted := `{"type":"compacted","payload":{"message":"summary"}}`
	many := func(n int, l string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = l
		}
		return out
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name  string
		lines []string
		cut   int // index of the line the cut before the last prompt goes before
	}{
		{"turn start", []string{prompt("T1", "a"), done, settings, started("T2"), ctx, prompt("T2", "b")}, 2},
		{"compaction inside the turn", cat([]string{prompt("T1", "a"), done, settings, started("T2")}, many(20, count),
			[]string{compacted, ctx, settings, prompt("T2", "b")}), 2},
		{"another turn's start", []string{prompt("T1", "a"), done, started("T9"), ctx, prompt("T2", "b")}, 3},
		{"second prompt of a turn", []string{settings, started("T2"), prompt("T2", "a"), reply, prompt("T2", "b")}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := strings.Join(tt.lines, "\n") + "\n"
			tr, err := New("", bytes.NewReader([]byte(data)), int64(len(data)), d)
			if err != nil {
				t.Fatal(err)
			}
			tu, err := tr.Back(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			want := int64(len(strings.Join(tt.lines[:tt.cut], "\n")) + 1)
			if tu.Offset != want {
				t.Errorf("cut at %d, want %d (before line %d)", tu.Offset, want, tt.cut)
			}
		})
	}
}

// TestRecordVersions: in a dialect whose records are updated by id, a prompt counts once, is cut
// before its record's first line (and that line's preamble), reads as its newest version, and a
// record whose newest version is not a prompt is no turn.
func TestRecordVersions(t *testing.T) {
	const profile = `{"id_field":"id",%s
	 "prompt":{"match":[{"field":"type","equals":"user"}],"content":["content"]},
	 "preamble":{"max_lines":4,"owned":[[{"field":"meta","present":true}]]}}`
	meta := `{"meta":{"sessionId":"s"}}`
	set := `{"$set":{"lastUpdated":"now"}}`
	user := func(id, text string) string { return `{"id":"` + id + `","type":"user","content":"` + text + `"}` }
	reply := func(id string) string { return `{"id":"` + id + `","type":"gemini","content":"ok"}` }
	type turn struct {
		cut, prompt int // line indexes
		text        string
	}
	tests := []struct {
		name  string
		lines []string
		want  []turn // newest first
		plain []turn // the same lines read without updates_by_id, where that differs
	}{
		{"prompt updated", []string{meta, user("u1", "first"), set, user("u1", "first again"), reply("a"), set, user("u2", "second")},
			[]turn{{6, 6, "second"}, {0, 1, "first again"}},
			[]turn{{6, 6, "second"}, {3, 3, "first again"}, {0, 1, "first"}}},
		{"newest prompt updated", []string{reply("a"), meta, user("u2", "v1"), set, set, user("u2", "v2")},
			[]turn{{1, 2, "v2"}}, []turn{{5, 5, "v2"}, {1, 2, "v1"}}},
		{"newest version no prompt", []string{reply("a"), user("u1", "typed"), set, reply("u1")},
			nil, []turn{{1, 1, "typed"}}},
		{"versions apart count once", []string{user("u1", "a"), reply("b"), user("u1", "a")},
			[]turn{{2, 2, "a"}}, []turn{{2, 2, "a"}, {0, 0, "a"}}},
		{"a prompt between stops the look back", []string{user("u1", "a"), `{"type":"user","content":"no id"}`, user("u1", "a")},
			[]turn{{2, 2, "a"}, {1, 1, "no id"}}, []turn{{2, 2, "a"}, {1, 1, "no id"}, {0, 0, "a"}}},
	}
	for _, tt := range tests {
		for _, on := range []bool{true, false} {
			flag, want := `"updates_by_id":true,`, tt.want
			if !on {
				flag, want = "", tt.plain
			}
			d, err := parseDialect("v", []byte(strings.Replace(profile, "%s", flag, 1)))
			if err != nil {
				t.Fatal(err)
			}
			data := strings.Join(tt.lines, "\n") + "\n"
			starts := []int64{0}
			for _, l := range tt.lines {
				starts = append(starts, starts[len(starts)-1]+int64(len(l))+1)
			}
			tr, err := New("", bytes.NewReader([]byte(data)), int64(len(data)), d)
			if err != nil {
				t.Fatal(err)
			}
			turns, err := tr.Turns(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			var got, exp []string
			for _, tu := range turns {
				got = append(got, fmt.Sprintf("%d/%d %q", tu.Offset, tu.PromptOffset, tu.Text))
			}
			for _, w := range want {
				exp = append(exp, fmt.Sprintf("%d/%d %q", starts[w.cut], starts[w.prompt], w.text))
			}
			if strings.Join(got, ", ") != strings.Join(exp, ", ") {
				t.Errorf("%s (updates_by_id %v): turns\n got %s\nwant %s", tt.name, on, strings.Join(got, ", "), strings.Join(exp, ", "))
			}
		}
	}
	if _, err := parseDialect("x", []byte(`{"updates_by_id":true,"prompt":{"match":[{"field":"type","equals":"user"}]}}`)); err == nil {
		t.Error("updates_by_id without an id_field was accepted")
	}
}

// TestClassifyGemini table-tests the Gemini CLI prompt rule on hand-made records: a prompt is a
// user record with text parts; the session context, hook context, slash commands and tool
// results (also user records) are not.
func TestClassifyGemini(t *testing.T) {
	d, err := LookupDialect("gemini")
	if err != nil {
		t.Fatal(err)
	}
	user := func(content string) string {
		return `{"id":"u1","timestamp":"2026-11-23T14:06:11.900Z","type":"user","content":` + content + `}`
	}
	tests := []struct {
		line string
		want Kind
		text string
	}{
		{user(`[{"text":"Create a.txt please"}]`), KindPrompt, "Create a.txt please"},
		{user(`[{"text":"look"},{"text":"--- Content from referenced files ---"}]`), KindPrompt, "look\n--- Content from referenced files ---"},
		{user(`"a plain string"`), KindPrompt, "a plain string"},
		{user(`[{"inlineData":{"mimeType":"image/png","data":"iVBOR"}}]`), KindPrompt, "[image]"},
		{user(`[{"text":"<session_context>\nThis is the Gemini CLI.</session_context>"}]`), KindEvent, ""},
		{user(`[{"text":"<hook_context>x</hook_context>"}]`), KindEvent, ""},
		{user(`[{"text":"/compress"}]`), KindEvent, ""},
		{user(`[{"text":"?"}]`), KindEvent, ""},
		{user(`[{"functionResponse":{"id":"write_file__x","name":"write_file","response":{"output":"ok"}}}]`), KindEvent, ""},
		{user(`[{"text":""}]`), KindEvent, ""},
		{`{"id":"g1","type":"gemini","content":"Done.","toolCalls":[]}`, KindEvent, ""},
		{`{"id":"i1","type":"info","content":""}`, KindEvent, ""},
		{`{"type":"user","content":[{"text":"no id: not a record"}]}`, KindEvent, ""},
		{`{"$set":{"messages":[{"id":"u","type":"user","content":[{"text":"inside a $set"}]}]}}`, KindEvent, ""},
		{`{"sessionId":"s","projectHash":"h","kind":"main"}`, KindEvent, ""},
	}
	for _, tt := range tests {
		ev := d.Classify([]byte(tt.line))
		if ev.Kind != tt.want || ev.Text != tt.text {
			t.Errorf("Classify(%s) = %v %q, want %v %q", tt.line, ev.Kind, ev.Text, tt.want, tt.text)
		}
	}
}

// TestRewindLines: a line that rewinds the conversation takes the record it names and those
// after it out of the turns; a name never found takes every record before it, as the agent's
// loader does.
func TestRewindLines(t *testing.T) {
	const profile = `{"id_field":"id",%s"prompt":{"match":[{"field":"type","equals":"user"}],"content":["content"]}}`
	user := func(id, text string) string { return `{"id":"` + id + `","type":"user","content":"` + text + `"}` }
	reply := func(id string) string { return `{"id":"` + id + `","type":"gemini","content":"ok"}` }
	rewind := func(id string) string { return `{"$rewindTo":"` + id + `"}` }
	set := `{"$set":{"messages":[]}}`
	tests := []struct {
		name        string
		lines       []string
		want, plain string // the turns' texts, newest first, with and without the rule
	}{
		{"rewound before b", []string{user("u1", "a"), reply("r1"), user("u2", "b"), reply("r2"), rewind("u2"), set, user("u3", "c")}, "c a", "c b a"},
		{"rewound to the start", []string{user("u1", "a"), reply("r1"), rewind("u1"), user("u2", "b")}, "b", "b a"},
		{"a name never found", []string{user("u1", "a"), user("u2", "b"), rewind("zz"), user("u3", "c")}, "c", "c b a"},
		{"two rewinds", []string{user("u1", "a"), user("u2", "b"), rewind("u2"), user("u3", "c"), rewind("u3"), user("u4", "d")}, "d a", "d c b a"},
	}
	for _, tt := range tests {
		for _, on := range []bool{true, false} {
			field, want := `"rewind_field":"$rewindTo",`, tt.want
			if !on {
				field, want = "", tt.plain
			}
			d, err := parseDialect("r", []byte(strings.Replace(profile, "%s", field, 1)))
			if err != nil {
				t.Fatal(err)
			}
			data := strings.Join(tt.lines, "\n") + "\n"
			tr, _ := New("", bytes.NewReader([]byte(data)), int64(len(data)), d)
			turns, err := tr.Turns(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tu := range turns {
				got = append(got, tu.Text)
			}
			if strings.Join(got, " ") != want {
				t.Errorf("%s (rule %v): turns %q, want %q", tt.name, on, got, want)
			}
		}
	}
}
