package fakeapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type sseEvent struct {
	name string
	data map[string]any
}

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data line is not JSON: %q", line)
			}
			if d["type"] != name {
				t.Errorf("event %q carries data of type %v", name, d["type"])
			}
			out = append(out, sseEvent{name, d})
		}
	}
	return out
}

// reassemble does what a client does with the stream: it concatenates text deltas and
// input_json_delta pieces per content block.
func reassemble(t *testing.T, events []sseEvent) (names []string, text string, tools []map[string]any, stop string) {
	t.Helper()
	partial := map[float64]*strings.Builder{}
	starts := map[float64]map[string]any{}
	for _, e := range events {
		names = append(names, e.name)
		switch e.name {
		case "content_block_start":
			idx := e.data["index"].(float64)
			starts[idx] = e.data["content_block"].(map[string]any)
			partial[idx] = &strings.Builder{}
		case "content_block_delta":
			idx := e.data["index"].(float64)
			d := e.data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				partial[idx].WriteString(d["text"].(string))
			case "input_json_delta":
				partial[idx].WriteString(d["partial_json"].(string))
			}
		case "content_block_stop":
			idx := e.data["index"].(float64)
			switch starts[idx]["type"] {
			case "text":
				text += partial[idx].String()
			case "tool_use":
				var in map[string]any
				if err := json.Unmarshal([]byte(partial[idx].String()), &in); err != nil {
					t.Fatalf("tool input does not reassemble to JSON: %q", partial[idx].String())
				}
				tools = append(tools, map[string]any{"id": starts[idx]["id"], "name": starts[idx]["name"], "input": in})
			}
		case "message_delta":
			stop = e.data["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	return names, text, tools, stop
}

func TestStreamedReplies(t *testing.T) {
	long := strings.Repeat("héllo wörld ", 10)
	tests := []struct {
		name      string
		reply     Reply
		wantNames string
		wantText  string
		wantTools int
		wantStop  string
	}{
		{
			name:      "text",
			reply:     TextReply(long),
			wantNames: "message_start ping content_block_start " + strings.Repeat("content_block_delta ", len(split(long, 16))) + "content_block_stop message_delta message_stop",
			wantText:  long,
			wantStop:  "end_turn",
		},
		{
			name: "text then tool_use",
			reply: Reply{Text: "Writing.", ToolUses: []ToolUse{{ID: "toolu_1", Name: "Write",
				Input: map[string]string{"file_path": "/tmp/a.txt", "content": "a long enough content to be split\n"}}}},
			wantText:  "Writing.",
			wantTools: 1,
			wantStop:  "tool_use",
		},
		{
			name:      "two tools, no text",
			reply:     Reply{ToolUses: []ToolUse{{ID: "a", Name: "Read", Input: map[string]string{"file_path": "/x"}}, {ID: "b", Name: "Bash", Input: map[string]string{"command": "ls"}}}},
			wantTools: 2,
			wantStop:  "tool_use",
		},
		{
			name:     "explicit stop reason",
			reply:    Reply{Text: "cut", StopReason: "max_tokens"},
			wantText: "cut",
			wantStop: "max_tokens",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := Start(func(*Request) Reply { return tt.reply })
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			resp := post(t, srv.URL+"/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("content type %q", ct)
			}
			names, text, tools, stop := reassemble(t, readSSE(t, resp.Body))
			if tt.wantNames != "" && strings.Join(names, " ") != tt.wantNames {
				t.Errorf("events:\n got %s\nwant %s", strings.Join(names, " "), tt.wantNames)
			}
			if names[0] != "message_start" || names[len(names)-1] != "message_stop" || names[len(names)-2] != "message_delta" {
				t.Errorf("event order: %v", names)
			}
			if text != tt.wantText {
				t.Errorf("text = %q, want %q", text, tt.wantText)
			}
			if len(tools) != tt.wantTools {
				t.Fatalf("tools = %v, want %d", tools, tt.wantTools)
			}
			for i, tu := range tools {
				want := tt.reply.ToolUses[i]
				wantIn, _ := json.Marshal(want.Input)
				gotIn, _ := json.Marshal(tu["input"])
				if tu["id"] != want.ID || tu["name"] != want.Name || string(gotIn) != string(wantIn) {
					t.Errorf("tool %d = %v, want %+v", i, tu, want)
				}
			}
			if stop != tt.wantStop {
				t.Errorf("stop = %q, want %q", stop, tt.wantStop)
			}
		})
	}
}

func TestNonStreamingReply(t *testing.T) {
	srv, err := Start(func(*Request) Reply {
		return Reply{Text: "t", ToolUses: []ToolUse{{ID: "x", Name: "Bash", Input: map[string]string{"command": "ls"}}}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp := post(t, srv.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	var msg struct {
		Type       string  `json:"type"`
		Content    Content `json:"content"`
		StopReason string  `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || len(msg.Content) != 2 || msg.Content[1].Name != "Bash" || string(msg.Content[1].Input) != `{"command":"ls"}` || msg.StopReason != "tool_use" {
		t.Errorf("message = %+v", msg)
	}
}

func TestCountTokensAndRecording(t *testing.T) {
	srv, err := Start(func(*Request) Reply { return TextReply("ok") })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := `{"model":"m","messages":[{"role":"user","content":"count me"}]}`
	resp := post(t, srv.URL+"/v1/messages/count_tokens", body)
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ct); err != nil || ct.InputTokens <= 0 {
		t.Errorf("count_tokens: %+v, %v", ct, err)
	}
	post(t, srv.URL+"/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"second"}]}`)
	resp = post(t, srv.URL+"/nowhere", `{}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: status %d", resp.StatusCode)
	}
	rec := srv.Recorded()
	if len(rec) != 3 || rec[0].Path != "/v1/messages/count_tokens" || string(rec[0].Body) != body || rec[1].Path != "/v1/messages" || rec[2].Path != "/nowhere" {
		t.Fatalf("recorded = %+v", rec)
	}
	if msgs := srv.Messages(); len(msgs) != 1 || msgs[0].LastPrompt() != "second" {
		t.Errorf("messages = %+v", msgs)
	}
}

func TestBadRequestBody(t *testing.T) {
	srv, err := Start(func(*Request) Reply { t.Error("script called for a bad body"); return Reply{} })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if resp := post(t, srv.URL+"/v1/messages", `{"messages":7}`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d", resp.StatusCode)
	}
}

// TestScriptDecidesFromContent: the request as Claude Code sends it on resume — injected
// reminders before the prompt, a system-role message between turns, tool results merged with
// the next prompt — gives the script the newest typed prompt and the answered tool calls.
func TestScriptDecidesFromContent(t *testing.T) {
	id := ToolID("write it", 0)
	body := `{"model":"m","stream":true,"system":[{"type":"text","text":"Primary working directory: /p"}],
	"tools":[{"name":"Write"}],
	"messages":[
	 {"role":"user","content":[{"type":"text","text":"<system-reminder>\nstuff\n</system-reminder>"},{"type":"text","text":"write it"}]},
	 {"role":"system","content":"Available agent types"},
	 {"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Write","input":{}}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"},{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"next one"}]},
	 {"role":"assistant","content":"fine"},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_other","content":[{"type":"text","text":"r"}]}]}
	]}`
	req, err := ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Prompts(); strings.Join(got, "|") != "write it|next one" {
		t.Errorf("prompts = %q", got)
	}
	if req.LastPrompt() != "next one" {
		t.Errorf("last prompt = %q", req.LastPrompt())
	}
	if !req.HasToolResult(id) || !req.HasToolResult("toolu_other") || req.HasToolResult(ToolID("write it", 1)) {
		t.Error("HasToolResult wrong")
	}
	if !req.HasTool("Write") || req.HasTool("Bash") {
		t.Error("HasTool wrong")
	}
	if !strings.Contains(req.SystemText(), "Primary working directory: /p") {
		t.Errorf("system = %q", req.SystemText())
	}
	// Called twice, the same answer: the server and the test compute it apart.
	first, again := ToolID("a", 0), ToolID("a", 0)
	if first != again || first == ToolID("b", 0) || first == ToolID("a", 1) {
		t.Error("ToolID is not a stable function of prompt and number")
	}
}

func TestSplitKeepsRunes(t *testing.T) {
	for _, s := range []string{"", "a", "ééééééééé", "日本語のテキスト", strings.Repeat("x", 100)} {
		parts := split(s, 4)
		if strings.Join(parts, "") != s {
			t.Errorf("split(%q) loses bytes: %q", s, parts)
		}
		for _, p := range parts {
			if !utf8.ValidString(p) {
				t.Errorf("split(%q) cut a rune: %q", s, p)
			}
		}
	}
}

// TestResponsesWire: a Codex-shaped /v1/responses request is read into the common model (typed
// prompts, calls and their outputs), and the reply streams as Responses API events ending with
// response.completed, a custom call's input sent as free text.
func TestResponsesWire(t *testing.T) {
	var got *Request
	srv, err := Start(func(r *Request) Reply {
		got = r
		return Reply{Text: "patching", ToolUses: []ToolUse{{ID: "call_2", Name: "apply_patch", Input: "*** Begin Patch\n*** End Patch", Custom: true}}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := `{"model":"gpt-5.5","stream":true,"tools":[{"type":"custom","name":"apply_patch"},{"type":"function","name":"exec_command"}],"input":[
	 {"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},
	 {"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]},
	 {"type":"message","role":"user","content":[{"type":"input_text","text":"P1 write"}]},
	 {"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"},
	 {"type":"function_call_output","call_id":"call_1","output":"a.txt"}]}`
	resp := post(t, srv.URL+"/v1/responses", body)
	events := readSSE(t, resp.Body)
	if got == nil || got.LastPrompt() != "P1 write" || !got.HasToolResult("call_1") || !got.HasTool("apply_patch") {
		t.Fatalf("request read as %+v", got)
	}
	var names []string
	for _, e := range events {
		names = append(names, e.name)
	}
	if names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Errorf("events %q", names)
	}
	var call map[string]any
	for _, e := range events {
		if item, _ := e.data["item"].(map[string]any); e.name == "response.output_item.done" && item["type"] == "custom_tool_call" {
			call = item
		}
	}
	if call == nil || call["input"] != "*** Begin Patch\n*** End Patch" || call["call_id"] != "call_2" {
		t.Errorf("custom call %v", call)
	}
	if msgs := srv.Messages(); len(msgs) != 1 || msgs[0].LastPrompt() != "P1 write" {
		t.Errorf("Messages() = %d requests", len(msgs))
	}
}

// TestCompaction: Claude Code's compaction request is told apart by its last user message, and
// neither its instruction nor the summary it leaves behind counts as a typed prompt.
func TestCompaction(t *testing.T) {
	ask, err := ParseRequest([]byte(`{"model":"m","messages":[
		{"role":"user","content":"alpha"},{"role":"assistant","content":"ok"},
		{"role":"user","content":[{"type":"text","text":"bravo"},{"type":"text","text":"CRITICAL: Respond with TEXT ONLY.\n\nYour task is to create a detailed summary of the conversation so far, paying close attention"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !ask.Compaction() || strings.Join(ask.Prompts(), "|") != "alpha|bravo" {
		t.Errorf("compaction request: Compaction() = %v, prompts %q", ask.Compaction(), ask.Prompts())
	}
	after, err := ParseRequest([]byte(`{"model":"m","messages":[
		{"role":"user","content":"This session is being continued from a previous conversation that ran out of context.\n\nSummary:\nS"},
		{"role":"user","content":[{"type":"text","text":"Continue from where you left off."}]},
		{"role":"user","content":"charlie"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if after.Compaction() || strings.Join(after.Prompts(), "|") != "charlie" {
		t.Errorf("after compaction: Compaction() = %v, prompts %q", after.Compaction(), after.Prompts())
	}
	if r := SummaryReply("S"); !strings.Contains(r.Text, "<summary>S</summary>") {
		t.Errorf("SummaryReply = %q", r.Text)
	}
}
