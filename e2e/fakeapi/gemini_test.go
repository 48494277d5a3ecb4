package fakeapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// geminiChunk is one streamed GenerateContentResponse, as far as the tests read it.
type geminiChunk struct {
	Candidates []struct {
		Content struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         *string `json:"text"`
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount int `json:"promptTokenCount"`
	} `json:"usageMetadata"`
}

func readGeminiStream(t *testing.T, r io.Reader) []geminiChunk {
	t.Helper()
	var out []geminiChunk
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("stream line is not data: %q", line)
		}
		var c geminiChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("data line is not JSON: %q", line)
		}
		out = append(out, c)
	}
	return out
}

// serveGeminiTest runs one request through the Gemini handler.
func serveGeminiTest(s *Server, path, body string) *http.Response {
	rec := httptest.NewRecorder()
	s.serveGemini(rec, path, []byte(body))
	return rec.Result()
}

// geminiResumeBody is a request as Gemini CLI 0.61.0 sends it after a resume: the session
// context and the first prompt in one user turn, the call it made with the id the fake gave it,
// the tool's response twice (the client's own quirk on resume), then the next prompt.
func geminiResumeBody(id string) string {
	return `{"contents":[
	 {"role":"user","parts":[{"text":"<session_context>\nThis is the Gemini CLI.\n</session_context>"},{"text":"write it"}]},
	 {"role":"model","parts":[{"text":"thinking","thought":true},{"functionCall":{"id":"` + id + `","name":"write_file","args":{"file_path":"a.txt","content":"x"}},"thoughtSignature":"skip_thought_signature_validator"}]},
	 {"role":"user","parts":[{"functionResponse":{"id":"` + id + `","name":"write_file","response":{"output":"ok"}}},{"functionResponse":{"id":"write_file__` + id + `","name":"write_file","response":{"output":"ok"}}}]},
	 {"role":"model","parts":[{"text":"Done."}]},
	 {"role":"user","parts":[{"text":"next one"}]}],
	"systemInstruction":{"role":"user","parts":[{"text":"You are Gemini CLI."}]},
	"tools":[{"functionDeclarations":[{"name":"write_file"},{"name":"replace"},{"name":"run_shell_command"}]}],
	"generationConfig":{"temperature":1}}`
}

// TestGeminiRequest: a Gemini request reads into the common model — typed prompts without the
// session context, calls and their responses under the ids the script gave them, the model's
// thoughts left out, the system instruction, the offered tools.
func TestGeminiRequest(t *testing.T) {
	id := ToolID("write it", 0)
	req, err := parseGeminiRequest("/v1beta/models/gemini-2.5-flash:streamGenerateContent", []byte(geminiResumeBody(id)))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(req.Prompts(), "|"); got != "write it|next one" {
		t.Errorf("prompts = %q", got)
	}
	if !req.HasToolResult(id) || req.HasToolResult(ToolID("write it", 1)) {
		t.Error("HasToolResult wrong")
	}
	if !req.HasTool("run_shell_command") || req.HasTool("Bash") {
		t.Error("HasTool wrong")
	}
	if req.Model != "gemini-2.5-flash" || !req.Stream || req.SystemText() != "You are Gemini CLI." {
		t.Errorf("model %q stream %v system %q", req.Model, req.Stream, req.SystemText())
	}
	model := req.Messages[1]
	if model.Role != "assistant" || len(model.Content) != 1 || model.Content[0].Type != "tool_use" || model.Content[0].ID != id ||
		string(model.Content[0].Input) != `{"file_path":"a.txt","content":"x"}` {
		t.Errorf("model turn = %+v", model)
	}
	for _, b := range req.Messages[2].Content {
		if b.Type != "tool_result" || b.ToolUseID != id {
			t.Errorf("response block %+v, want a tool_result for %s (the internal write_file__ prefix dropped)", b, id)
		}
	}
}

// TestGeminiStream: a reply streams as GenerateContentResponse chunks that reassemble to the
// text, with the function calls (ids as scripted) in the last chunk, which alone carries the
// finish reason and the usage.
func TestGeminiStream(t *testing.T) {
	long := strings.Repeat("héllo wörld ", 5)
	tests := []struct {
		name  string
		reply Reply
	}{
		{"text", TextReply(long)},
		{"empty text", TextReply("")},
		{"text then calls", Reply{Text: "Working.", ToolUses: []ToolUse{
			{ID: "toolu_1", Name: "write_file", Input: map[string]string{"file_path": "a.txt", "content": "x"}},
			{ID: "toolu_2", Name: "run_shell_command", Input: map[string]string{"command": "ls"}}}}},
		{"a call alone", Reply{ToolUses: []ToolUse{{ID: "toolu_3", Name: "replace", Input: map[string]string{"file_path": "a.txt"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{script: func(*Request) Reply { return tt.reply }}
			resp := serveGeminiTest(s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", geminiResumeBody("x"))
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("content type %q", ct)
			}
			chunks := readGeminiStream(t, resp.Body)
			if len(chunks) == 0 {
				t.Fatal("no chunks")
			}
			var text strings.Builder
			var calls []string
			for i, c := range chunks {
				last := i == len(chunks)-1
				if (c.Candidates[0].FinishReason == "STOP") != last || (c.UsageMetadata != nil) != last {
					t.Errorf("chunk %d of %d: finish %q usage %v", i, len(chunks), c.Candidates[0].FinishReason, c.UsageMetadata)
				}
				if c.Candidates[0].Content.Role != "model" {
					t.Errorf("chunk %d role %q", i, c.Candidates[0].Content.Role)
				}
				for _, p := range c.Candidates[0].Content.Parts {
					if p.Text != nil {
						text.WriteString(*p.Text)
					}
					if fc := p.FunctionCall; fc != nil {
						if !last {
							t.Errorf("a function call in chunk %d of %d", i, len(chunks))
						}
						calls = append(calls, fc.ID+" "+fc.Name+" "+string(fc.Args))
					}
				}
			}
			if text.String() != tt.reply.Text {
				t.Errorf("text = %q, want %q", text.String(), tt.reply.Text)
			}
			var want []string
			for _, tu := range tt.reply.ToolUses {
				want = append(want, tu.ID+" "+tu.Name+" "+inputJSON(tu.Input))
			}
			if strings.Join(calls, "\n") != strings.Join(want, "\n") {
				t.Errorf("calls:\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
			}
			if u := chunks[len(chunks)-1].UsageMetadata; u == nil || u.PromptTokenCount <= 1 {
				t.Errorf("usage %+v: the prompt token count follows the request's size", u)
			}
		})
	}
}

// TestGeminiSideRequests: :generateContent answers with one JSON response; a structured-output
// request gets JSON of its schema without asking the script; :countTokens counts.
func TestGeminiSideRequests(t *testing.T) {
	called := 0
	s := &Server{script: func(*Request) Reply { called++; return TextReply("A title") }}
	resp := serveGeminiTest(s, "/v1beta/models/gemini-3.5-flash-lite:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"Summarize the user's primary intent"}]}]}`)
	var out geminiChunk
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || *out.Candidates[0].Content.Parts[0].Text != "A title" || called != 1 {
		t.Fatalf("generateContent: %+v %v (script called %d times)", out, err, called)
	}

	resp = serveGeminiTest(s, "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"text":"who speaks next?"}]}],
	 "generationConfig":{"responseJsonSchema":{"type":"object","properties":{"reasoning":{"type":"string"},"next_speaker":{"type":"string","enum":["model","user"]},"n":{"type":"integer"}}}}}`)
	out = geminiChunk{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(*out.Candidates[0].Content.Parts[0].Text), &v); err != nil || v["next_speaker"] != "user" || v["n"] != 0.0 || v["reasoning"] == "" {
		t.Errorf("structured reply %v (%v)", v, err)
	}
	if called != 1 {
		t.Errorf("the script answered a structured-output request")
	}

	resp = serveGeminiTest(s, "/v1beta/models/gemini-2.5-flash:countTokens", `{"contents":[{"role":"user","parts":[{"text":"count me"}]}]}`)
	var ct struct {
		TotalTokens int `json:"totalTokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ct); err != nil || ct.TotalTokens <= 0 {
		t.Errorf("countTokens: %+v %v", ct, err)
	}
	if resp := serveGeminiTest(s, "/v1beta/models/m:streamGenerateContent", `{"contents":7}`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad body: status %d", resp.StatusCode)
	}
	if resp := serveGeminiTest(s, "/v1beta/models/m:embedContent", `{}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown method: status %d", resp.StatusCode)
	}
}

// TestGeminiServed: the server routes the Gemini paths, and Messages lists the generate
// requests (not :countTokens) in the common model.
func TestGeminiServed(t *testing.T) {
	srv, err := Start(func(r *Request) Reply { return TextReply("done: " + r.LastPrompt()) })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := srv.URL + "/v1beta/models/gemini-2.5-flash"
	post(t, base+":countTokens", `{"contents":[]}`)
	chunks := readGeminiStream(t, post(t, base+":streamGenerateContent?alt=sse", geminiResumeBody("x")).Body)
	if p := chunks[len(chunks)-1].Candidates[0].Content.Parts; len(p) != 1 || p[0].Text == nil || !strings.HasSuffix(*p[0].Text, "one") {
		t.Errorf("last chunk %+v", chunks[len(chunks)-1])
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || msgs[0].LastPrompt() != "next one" || !msgs[0].HasToolResult("x") {
		t.Errorf("Messages() = %+v", msgs)
	}
}
