package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The OpenAI Responses API as Codex CLI 0.169.0 uses it (POST /v1/responses, stream:true), as
// established against the real client: it acts on response.output_item.done (the item it
// records and executes) and response.output_text.delta, needs a non-null "response" in
// response.created, and a response.completed with the response's id and usage, without which it
// reports "stream closed before response.completed". Tool results come back as
// function_call_output / custom_tool_call_output input items naming the call_id.

// responsesRequest is the part of a /v1/responses body the scripts need.
type responsesRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Input  []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Input     string          `json:"input"`
		Output    json.RawMessage `json:"output"`
	} `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// parseResponsesRequest reads a /v1/responses body into the common Request model: user and
// assistant messages with text blocks, calls as tool_use blocks (id = call_id), their outputs
// as tool_result blocks. Developer messages (instructions, hook context) are left out.
func parseResponsesRequest(body []byte) (*Request, error) {
	var in responsesRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("fakeapi: responses request body: %w", err)
	}
	r := &Request{Model: in.Model, Stream: in.Stream, Raw: body}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, struct {
			Name string `json:"name"`
		}{t.Name})
	}
	add := func(role string, b Block) {
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Content = append(r.Messages[n-1].Content, b)
			return
		}
		r.Messages = append(r.Messages, Message{Role: role, Content: Content{b}})
	}
	for _, it := range in.Input {
		switch it.Type {
		case "message":
			if it.Role != "user" && it.Role != "assistant" {
				continue
			}
			for _, text := range responseTexts(it.Content) {
				add(it.Role, Block{Type: "text", Text: text})
			}
		case "function_call":
			add("assistant", Block{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: json.RawMessage(orEmptyObject(it.Arguments))})
		case "custom_tool_call":
			in, _ := json.Marshal(it.Input)
			add("assistant", Block{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: in})
		case "function_call_output", "custom_tool_call_output":
			add("user", Block{Type: "tool_result", ToolUseID: it.CallID, Content: it.Output})
		}
	}
	return r, nil
}

// responseTexts are the text parts of a message item's content (a string counts as one).
func responseTexts(content json.RawMessage) []string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []string{s}
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(content, &parts)
	var out []string
	for _, p := range parts {
		if p.Type == "input_text" || p.Type == "output_text" || p.Type == "text" {
			out = append(out, p.Text)
		}
	}
	return out
}

func orEmptyObject(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

func (s *Server) serveResponses(w http.ResponseWriter, id string, body []byte) {
	req, err := parseResponsesRequest(body)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q}}`, err.Error())
		return
	}
	writeResponses(w, "resp_"+id, req.Model, s.script(req))
}

// writeResponses streams a reply as Responses API events: created, in_progress, then per
// output item added (with text deltas) and done, then completed with usage.
func writeResponses(w http.ResponseWriter, respID, model string, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	seq := 0
	event := func(typ string, data map[string]any) {
		data["type"], data["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	response := func(status string, output []any, usage bool) map[string]any {
		o := map[string]any{"id": respID, "object": "response", "created_at": 1700000000, "status": status, "model": model, "output": output}
		if output == nil {
			o["output"] = []any{}
		}
		if usage {
			o["usage"] = map[string]any{
				"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110,
			}
		}
		return o
	}
	event("response.created", map[string]any{"response": response("in_progress", nil, false)})
	event("response.in_progress", map[string]any{"response": response("in_progress", nil, false)})
	var output []any
	index := 0
	if r.Text != "" || len(r.ToolUses) == 0 {
		itemID := fmt.Sprintf("msg_%s_%d", respID, index)
		event("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{
			"type": "message", "id": itemID, "status": "in_progress", "role": "assistant", "content": []any{}}})
		for _, piece := range split(r.Text, 16) {
			event("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "delta": piece})
		}
		item := map[string]any{"type": "message", "id": itemID, "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}}
		event("response.output_item.done", map[string]any{"output_index": index, "item": item})
		output = append(output, item)
		index++
	}
	for _, tu := range r.ToolUses {
		var item map[string]any
		if tu.Custom {
			text, _ := tu.Input.(string)
			item = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%s_%d", respID, index), "status": "completed",
				"call_id": tu.ID, "name": tu.Name, "input": text}
		} else {
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%s_%d", respID, index), "status": "completed",
				"call_id": tu.ID, "name": tu.Name, "arguments": inputJSON(tu.Input)}
		}
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["status"] = "in_progress"
		event("response.output_item.added", map[string]any{"output_index": index, "item": added})
		event("response.output_item.done", map[string]any{"output_index": index, "item": item})
		output = append(output, item)
		index++
	}
	event("response.completed", map[string]any{"response": response("completed", output, true)})
}
