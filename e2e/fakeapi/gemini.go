package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Gemini API (generativelanguage v1beta) as Gemini CLI 0.61.0 uses it, established against
// the real client (GOOGLE_GEMINI_BASE_URL pointing here, any GEMINI_API_KEY):
//
//	POST /v1beta/models/<model>:streamGenerateContent?alt=sse   the conversation, streamed
//	POST /v1beta/models/<model>:generateContent                 side requests: titles, compression,
//	                                                            structured output (next speaker…)
//	POST /v1beta/models/<model>:countTokens                     {"totalTokens": n}
//
// A request holds contents (turns of role "user" or "model", each a list of parts: text,
// functionCall, functionResponse), systemInstruction, tools[].functionDeclarations and
// generationConfig. The client sends back a call's id as it received it, in the history's
// functionCall and in its functionResponse (internally, in hooks and its chat file, it is
// "<tool>__<id>"). The stream is "data: <GenerateContentResponse>" lines: the text in pieces,
// then one chunk with the function calls, the finish reason and usageMetadata, whose
// promptTokenCount the client's compression arithmetic reads (about four bytes a token here).
//
// Structured-output requests (generationConfig.responseJsonSchema or responseSchema) are
// answered here with a JSON value built from the schema, without the script: the client sends
// them between turns (is the next speaker the user?) and fails on anything but JSON of that
// shape; "next_speaker" is "user", so its turn ends.

// geminiRequest is the part of a GenerateContentRequest the scripts need.
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
	// :countTokens may wrap the request.
	GenerateContentRequest *geminiRequest `json:"generateContentRequest"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// geminiRoute splits a Gemini API path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
// into the model and the method; ok is false for any other path.
func geminiRoute(path string) (model, method string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/v1beta/models/")
	if !ok {
		return "", "", false
	}
	model, method, ok = strings.Cut(rest, ":")
	return model, method, ok && model != "" && method != ""
}

// isGeminiGenerate reports whether a recorded path is a Gemini conversation request (the
// generate methods; :countTokens is not one).
func isGeminiGenerate(path string) bool {
	_, method, ok := geminiRoute(path)
	return ok && (method == "streamGenerateContent" || method == "generateContent")
}

// parseGeminiRequest reads a Gemini request body into the common Request model: "user" turns
// as user messages and "model" turns as assistant messages, text parts as text blocks (the
// model's thoughts left out), function calls as tool_use blocks and function responses as
// tool_result blocks naming the call's id, the system instruction as the system prompt.
func parseGeminiRequest(path string, body []byte) (*Request, error) {
	r, _, err := parseGemini(path, body)
	return r, err
}

// parseGemini is parseGeminiRequest that also returns a structured-output request's schema.
func parseGemini(path string, body []byte) (*Request, json.RawMessage, error) {
	var in geminiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, nil, fmt.Errorf("fakeapi: gemini request body: %w", err)
	}
	if len(in.Contents) == 0 && in.GenerateContentRequest != nil {
		in = *in.GenerateContentRequest
	}
	model, method, _ := geminiRoute(path)
	r := &Request{Model: model, Stream: method == "streamGenerateContent", Raw: body}
	for _, t := range in.Tools {
		for _, d := range t.FunctionDeclarations {
			r.Tools = append(r.Tools, struct {
				Name string `json:"name"`
			}{d.Name})
		}
	}
	if in.SystemInstruction != nil {
		for _, p := range in.SystemInstruction.Parts {
			if p.Text != nil {
				r.System = append(r.System, Block{Type: "text", Text: *p.Text})
			}
		}
	}
	for _, c := range in.Contents {
		role := "user"
		if c.Role == "model" {
			role = "assistant"
		}
		m := Message{Role: role}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				m.Content = append(m.Content, Block{Type: "tool_use", ID: bareCallID(p.FunctionCall.Name, p.FunctionCall.ID),
					Name: p.FunctionCall.Name, Input: json.RawMessage(orEmptyObject(string(p.FunctionCall.Args)))})
			case p.FunctionResponse != nil:
				m.Content = append(m.Content, Block{Type: "tool_result", ToolUseID: bareCallID(p.FunctionResponse.Name, p.FunctionResponse.ID),
					Name: p.FunctionResponse.Name, Content: p.FunctionResponse.Response})
			case p.Text != nil && !p.Thought:
				m.Content = append(m.Content, Block{Type: "text", Text: *p.Text})
			}
		}
		r.Messages = append(r.Messages, m)
	}
	return r, in.schema(), nil
}

// bareCallID is the id a script gave a call: the client echoes it as it was sent, but names the
// call "<tool>__<id>" internally, and a call the model sent without an id gets one of that form.
func bareCallID(name, id string) string {
	if rest, ok := strings.CutPrefix(id, name+"__"); ok && name != "" {
		return rest
	}
	return id
}

// schema is a structured-output request's JSON schema, or nil.
func (in *geminiRequest) schema() json.RawMessage {
	for _, s := range []json.RawMessage{in.GenerationConfig.ResponseJSONSchema, in.GenerationConfig.ResponseSchema} {
		if len(s) > 0 && string(s) != "null" {
			return s
		}
	}
	return nil
}

func (s *Server) serveGemini(w http.ResponseWriter, path string, body []byte) {
	model, method, _ := geminiRoute(path)
	if method == "countTokens" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens":%d}`, len(body)/4+1)
		return
	}
	if method != "streamGenerateContent" && method != "generateContent" {
		geminiError(w, http.StatusNotFound, "fakeapi: no gemini method "+method)
		return
	}
	req, schema, err := parseGemini(path, body)
	if err != nil {
		geminiError(w, http.StatusBadRequest, err.Error())
		return
	}
	var reply Reply
	if schema != nil {
		reply = Reply{Text: string(fillSchema(schema))}
	} else {
		reply = s.script(req)
	}
	promptTokens := len(body)/4 + 1
	if req.Stream {
		writeGeminiStream(w, model, reply, promptTokens)
	} else {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(geminiResponse(model, geminiParts(reply, true), true, promptTokens))
	}
}

// geminiError answers with the Google API error envelope.
func geminiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": http.StatusText(code)}})
}

// geminiParts are a reply's parts: its text (when withText), then its function calls.
func geminiParts(r Reply, withText bool) []any {
	var parts []any
	if withText && (r.Text != "" || len(r.ToolUses) == 0) {
		parts = append(parts, map[string]any{"text": r.Text})
	}
	for _, tu := range r.ToolUses {
		call := map[string]any{"name": tu.Name, "args": json.RawMessage(inputJSON(tu.Input))}
		if tu.ID != "" {
			call["id"] = tu.ID
		}
		parts = append(parts, map[string]any{"functionCall": call})
	}
	return parts
}

// geminiResponse is one GenerateContentResponse; the last one of a reply (final) carries the
// finish reason and the usage.
func geminiResponse(model string, parts []any, final bool, promptTokens int) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": model}
	if final {
		cand["finishReason"] = "STOP"
		resp["usageMetadata"] = map[string]int{"promptTokenCount": promptTokens, "candidatesTokenCount": 10, "totalTokenCount": promptTokens + 10}
	}
	return resp
}

// writeGeminiStream streams a reply as server-sent events: the text in pieces, then a final
// chunk holding the function calls (or, without any, the last piece of text).
func writeGeminiStream(w http.ResponseWriter, model string, r Reply, promptTokens int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	pieces := split(r.Text, 16)
	calls := geminiParts(r, false)
	if len(calls) == 0 {
		if len(pieces) == 0 {
			pieces = []string{""}
		}
		for i, p := range pieces {
			send(geminiResponse(model, []any{map[string]any{"text": p}}, i == len(pieces)-1, promptTokens))
		}
		return
	}
	for _, p := range pieces {
		send(geminiResponse(model, []any{map[string]any{"text": p}}, false, promptTokens))
	}
	send(geminiResponse(model, calls, true, promptTokens))
}

// fillSchema builds a JSON value that satisfies a simple JSON schema: the first of an enum,
// empty arrays, false, 0, "fake <name>" strings; "next_speaker" is "user" (the client's turn
// ends) and "model_choice" "flash" (its model router).
func fillSchema(schema json.RawMessage) json.RawMessage {
	var s map[string]any
	if json.Unmarshal(schema, &s) != nil {
		return json.RawMessage("{}")
	}
	b, _ := json.Marshal(fillValue(s, ""))
	return b
}

func fillValue(s map[string]any, name string) any {
	switch name {
	case "next_speaker":
		return "user"
	case "model_choice":
		return "flash"
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := s["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				out[k] = fillValue(m, k)
			}
		}
		return out
	case "array":
		return []any{}
	case "boolean":
		return false
	case "number", "integer":
		return 0
	}
	return "fake " + name
}
