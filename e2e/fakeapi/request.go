package fakeapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Request is a parsed /v1/messages request body.
type Request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	System   Content   `json:"system"`
	Messages []Message `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`

	Raw []byte `json:"-"`
}

// Message is one conversation message; Content is a string or a list of blocks in the wire
// format, always a list of blocks here.
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is a list of content blocks; a plain string decodes as one text block.
type Content []Block

// Block is one content block. Only the fields the scripts need are decoded.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

// UnmarshalJSON accepts a string or an array of blocks.
func (c *Content) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var blocks []Block
	if err := json.Unmarshal(b, &blocks); err != nil {
		return fmt.Errorf("content is neither a string nor a list of blocks: %w", err)
	}
	*c = blocks
	return nil
}

// ParseRequest decodes a /v1/messages request body.
func ParseRequest(body []byte) (*Request, error) {
	var r Request
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("fakeapi: request body: %w", err)
	}
	r.Raw = body
	return &r, nil
}

// compactionAsk is what Claude Code's compaction request (/compact, or its own when the context
// fills) asks the model for, in the user message it adds after the conversation.
const compactionAsk = "Your task is to create a detailed summary of the conversation so far"

// isInjected reports whether a user text block was put there by the client, not typed.
func isInjected(text string) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	return t == "" || strings.Contains(t, compactionAsk) || hasPrefixAny(t, "<system-reminder>",
		// Claude Code: the summary a compaction left in place of the conversation, and the
		// line it adds on the next run after one.
		"This session is being continued from a previous conversation", "Continue from where you left off.", "<command-name>", "<command-message>",
		"<local-command-", "Caveat: The messages below", "[Request interrupted",
		// Codex: its environment, AGENTS.md, skills and hook context, summaries.
		"<environment_context>", "# AGENTS.md instructions", "<user_instructions>", "<INSTRUCTIONS>",
		"<skills_instructions>", "Another language model started to solve this problem", "<user_shell_command>",
		"<turn_aborted>", "<hook_prompt", "<subagent_notification>", "<permissions instructions>",
		"<collaboration_mode>", "<apps_instructions>", "<plugins_instructions>",
		// Gemini CLI: its session context, hook context, a compression's summary.
		"<session_context>", "<hook_context>", "<state_snapshot>")
}

// Prompts returns the texts the user typed, oldest first: the text blocks of user messages
// that are not client-injected reminders (tool results are not text blocks), without what a
// client puts before the typed words (Copilot's <current_datetime>…</current_datetime>).
func (r *Request) Prompts() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" && !isInjected(b.Text) {
				out = append(out, typed(b.Text))
			}
		}
	}
	return out
}

// typed strips a leading <current_datetime> element and the blank line after it.
func typed(text string) string {
	if rest, ok := strings.CutPrefix(text, "<current_datetime>"); ok {
		if _, after, ok := strings.Cut(rest, "</current_datetime>"); ok {
			return strings.TrimLeft(after, "\n")
		}
	}
	return text
}

// LastPrompt is the newest typed prompt in the request, or "" when there is none.
func (r *Request) LastPrompt() string {
	p := r.Prompts()
	if len(p) == 0 {
		return ""
	}
	return p[len(p)-1]
}

// Compaction reports whether r is Claude Code's request for a compaction summary: its last
// user message asks for a summary of the conversation so far. It offers the usual tools (and
// forbids their use in words), so a script must answer it before looking at tools.
func (r *Request) Compaction() bool {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" {
			for _, b := range m.Content {
				if b.Type == "text" && strings.Contains(b.Text, compactionAsk) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// SummaryReply answers a compaction request ([Request.Compaction]) the way the model does: an
// analysis, then the summary, which the client keeps in place of the conversation.
func SummaryReply(summary string) Reply {
	return TextReply("<analysis>The conversation so far.</analysis>\n\n<summary>" + summary + "</summary>")
}

// Call is the reply that makes the client call tool name with input, as call n of the
// conversation's last prompt; ok is false once the client has sent that call's result, so a
// script moves on to its next call.
func (r *Request) Call(n int, name string, input any) (reply Reply, ok bool) {
	id := ToolID(r.LastPrompt(), n)
	if r.HasToolResult(id) {
		return Reply{}, false
	}
	return Reply{Text: "Calling " + name + ".", ToolUses: []ToolUse{{ID: id, Name: name, Input: input}}}, true
}

// HasToolResult reports whether the conversation already holds the result of tool call id.
func (r *Request) HasToolResult(id string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" && b.ToolUseID == id {
				return true
			}
		}
	}
	return false
}

// SystemText is the system prompt's text blocks joined by newlines.
func (r *Request) SystemText() string {
	var parts []string
	for _, b := range r.System {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// HasTool reports whether the request offers the model a tool of that name. The client's
// side requests (titles, summaries) offer none, so this tells the main conversation apart.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}
