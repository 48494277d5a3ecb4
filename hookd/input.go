package hookd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// maxInput bounds what rewind-hook reads from stdin: a PostToolUse payload
// carries the tool's response, which may hold a whole file.
const maxInput = 64 << 20

// Input is what an agent sends a hook on stdin: the fields Rewind uses,
// under their canonical (Claude Code) names whatever the agent calls them
// (see ../shared/AGENTS.md and the profiles' payload maps).
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source,omitempty"` // SessionStart: startup|resume|clear|compact|fork
	Prompt         string `json:"prompt,omitempty"` // UserPromptSubmit
	ToolName       string `json:"tool_name,omitempty"`

	ToolInput json.RawMessage `json:"tool_input,omitempty"`

	// raw holds every top-level member, for the keys a profile names
	// (Droid's CLAUDE_ENV_FILE, Copilot's camelCase).
	raw map[string]json.RawMessage
}

// ParseInput reads one hook payload, its members taken under their
// canonical names; For re-reads them under an agent's.
func ParseInput(r io.Reader) (*Input, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the hook input: %w", err)
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("hook input larger than %d MiB", maxInput>>20)
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, fmt.Errorf("no hook input on stdin (an agent sends one JSON object)")
	}
	in := new(Input)
	if err := json.Unmarshal(b, &in.raw); err != nil {
		return nil, fmt.Errorf("hook input is not a JSON object: %w", err)
	}
	in.fill(func(k string) string { return k })
	return in, nil
}

// For fills the fields from the agent's own payload keys.
func (in *Input) For(a *Agent) {
	in.fill(a.payloadKey)
}

func (in *Input) fill(key func(string) string) {
	for k, dst := range map[string]*string{
		"session_id": &in.SessionID, "transcript_path": &in.TranscriptPath, "cwd": &in.Cwd,
		"hook_event_name": &in.HookEventName, "source": &in.Source, "prompt": &in.Prompt,
		"tool_name": &in.ToolName,
	} {
		*dst = in.String(key(k))
	}
	in.ToolInput = in.raw[key("tool_input")]
	// A tool's arguments sent as a JSON string holding the object.
	var s string
	if json.Unmarshal(in.ToolInput, &s) == nil && strings.HasPrefix(strings.TrimSpace(s), "{") {
		in.ToolInput = json.RawMessage(s)
	}
}

// String returns the top-level member key when it is a string, else "".
func (in *Input) String(key string) string {
	raw, ok := in.raw[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// Has reports whether the payload has the top-level member key.
func (in *Input) Has(key string) bool {
	_, ok := in.raw[key]
	return ok
}

// File is the file a tool event names: the first of the agent's file keys
// in tool_input, or the first file of an apply_patch-style patch.
func (in *Input) File(a *Agent) string {
	var args map[string]json.RawMessage
	if len(in.ToolInput) == 0 || json.Unmarshal(in.ToolInput, &args) != nil {
		return ""
	}
	str := func(k string) string {
		var s string
		if json.Unmarshal(args[k], &s) != nil {
			return ""
		}
		return s
	}
	for _, k := range a.FileKeys {
		if s := str(k); s != "" {
			return s
		}
	}
	for _, k := range a.PatchKeys {
		for _, line := range strings.Split(str(k), "\n") {
			for _, p := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: "} {
				if f, ok := strings.CutPrefix(line, p); ok {
					return strings.TrimSpace(f)
				}
			}
		}
	}
	return ""
}
