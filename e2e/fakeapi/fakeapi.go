// Package fakeapi is a fake model API on 127.0.0.1, for driving real agent CLIs offline in
// end-to-end tests. It speaks three wire formats, each on its own path: the Anthropic Messages
// API (Claude Code, Droid, Copilot, pi, OpenCode), the OpenAI Responses API (Codex, see
// openai.go) and the Gemini API (Gemini CLI, see gemini.go). Every format's request is parsed
// into one [Request] of messages and content blocks, and a scripted [Reply] is written back in
// the request's own format, so one script serves every agent.
//
// For Anthropic it streams Server-Sent Events the way the real API does (message_start,
// content_block_start/delta/stop for text and tool_use with input_json_delta, message_delta with
// the stop reason, message_stop), answers /v1/messages/count_tokens, and records every request
// body it receives so a test can check exactly which conversation the client sent.
//
// Replies are scripted per test by a function of the request. Claude Code merges and reorders
// history on resume (tool results and the next prompt arrive in one user message, system-role
// messages appear between turns, <system-reminder> text blocks precede the prompt), so a script
// must decide from content — [Request.LastPrompt], and tool-use ids derived from the prompt
// ([ToolID]) checked against [Request.HasToolResult] — never by counting messages.
package fakeapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Script decides the model's reply to one /v1/messages request.
type Script func(*Request) Reply

// Reply is one scripted assistant message: optional text, then tool calls.
type Reply struct {
	Text       string
	ToolUses   []ToolUse
	StopReason string // default: "tool_use" when ToolUses is non-empty, else "end_turn"
}

// ToolUse is one scripted tool call; Input is marshalled to JSON and streamed in pieces. A
// Custom call (Codex's apply_patch) takes free-form text: Input is then a string sent as is.
type ToolUse struct {
	ID     string
	Name   string
	Input  any
	Custom bool
}

// TextReply is a Reply holding only text.
func TextReply(text string) Reply { return Reply{Text: text} }

// ToolID derives a stable tool_use id from a prompt and a call number, so a script can tell
// which of its calls the client has already answered ([Request.HasToolResult]).
func ToolID(prompt string, n int) string {
	sum := sha256.Sum256([]byte(prompt))
	return fmt.Sprintf("toolu_%s_%d", hex.EncodeToString(sum[:8]), n)
}

// Recorded is one request the server received, on any path.
type Recorded struct {
	Method string
	Path   string
	Body   []byte
}

// Server is a running fake API.
type Server struct {
	URL string // http://127.0.0.1:PORT, for ANTHROPIC_BASE_URL

	script Script
	srv    *http.Server
	ln     net.Listener

	mu       sync.Mutex
	recorded []Recorded
	msgID    int
}

// Start listens on a random loopback port and serves until Close.
func Start(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeapi: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, ln: ln}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Recorded returns a copy of every request received so far, oldest first.
func (s *Server) Recorded() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.recorded...)
}

// Messages returns the model requests received so far, oldest first, of every wire format,
// parsed into the one Request model.
func (s *Server) Messages() []*Request {
	var out []*Request
	for _, r := range s.Recorded() {
		var req *Request
		var err error
		switch {
		case r.Path == "/v1/messages":
			req, err = ParseRequest(r.Body)
		case r.Path == "/v1/responses":
			req, err = parseResponsesRequest(r.Body)
		case isGeminiGenerate(r.Path):
			req, err = parseGeminiRequest(r.Path, r.Body)
		default:
			continue
		}
		if err == nil {
			out = append(out, req)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.recorded = append(s.recorded, Recorded{Method: r.Method, Path: r.URL.Path, Body: body})
	s.msgID++
	id := fmt.Sprintf("msg_fake_%06d", s.msgID)
	s.mu.Unlock()

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		s.serveResponses(w, id, body)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/"):
		s.serveGemini(w, r.URL.Path, body)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[],"models":[]}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		// A rough figure is all a client needs: about four bytes per token.
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4+1)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		req, err := ParseRequest(body)
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, err.Error())
			return
		}
		reply := s.script(req)
		if req.Stream {
			writeStream(w, id, req.Model, reply)
		} else {
			writeMessage(w, id, req.Model, reply)
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"not_found_error","message":"fakeapi: no route %s %s"}}`, r.Method, r.URL.Path)
	}
}

func (r Reply) stopReason() string {
	switch {
	case r.StopReason != "":
		return r.StopReason
	case len(r.ToolUses) > 0:
		return "tool_use"
	default:
		return "end_turn"
	}
}

func inputJSON(in any) string {
	if in == nil {
		return "{}"
	}
	if raw, ok := in.(json.RawMessage); ok {
		return string(raw)
	}
	b, err := json.Marshal(in)
	if err != nil {
		panic(fmt.Sprintf("fakeapi: tool input does not marshal: %v", err))
	}
	return string(b)
}

// writeMessage answers a non-streaming request with one JSON message.
func writeMessage(w http.ResponseWriter, id, model string, r Reply) {
	var content []any
	if r.Text != "" || len(r.ToolUses) == 0 {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	for _, tu := range r.ToolUses {
		content = append(content, map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": json.RawMessage(inputJSON(tu.Input))})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": r.stopReason(), "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 10},
	})
}

// writeStream answers a streaming request with the SSE event sequence of the real API.
func writeStream(w http.ResponseWriter, id, model string, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 1},
	}})
	event("ping", map[string]string{"type": "ping"})
	index := 0
	if r.Text != "" || len(r.ToolUses) == 0 {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]string{"type": "text", "text": ""}})
		for _, piece := range split(r.Text, 16) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]string{"type": "text_delta", "text": piece}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, tu := range r.ToolUses {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": map[string]any{}}})
		for _, piece := range split(inputJSON(tu.Input), 12) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]string{"type": "input_json_delta", "partial_json": piece}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]string{"type": "message_stop"})
}

// split cuts s into pieces of at most n bytes without splitting a UTF-8 sequence, so the
// client has to reassemble deltas as it does with the real API. An empty s gives no pieces.
func split(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		cut := min(n, len(s))
		for cut < len(s) && cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = len(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// hasPrefixAny reports whether s starts with any of the prefixes.
func hasPrefixAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
