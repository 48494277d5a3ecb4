package hookd

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"rewind.dev/internal/cmdline"
)

//go:embed tiers/*.json
var tierFS embed.FS

// Policy says whether an event takes a checkpoint (Request.Checkpoint).
type Policy string

// Checkpoint policies of a tier's hooks.
const (
	CheckpointAlways    Policy = "always"    // never skipped: session start, prompt boundaries
	CheckpointThrottled Policy = "throttled" // anti-spam interval and significance apply
	CheckpointNone      Policy = "none"      // only keep session.json current
)

// ToolClass is what a tool does, as far as checkpoints care.
type ToolClass string

// Tool classes: an agent's profile lists its tools of each class.
const (
	ToolsEdit  ToolClass = "edit"  // tools that write files
	ToolsShell ToolClass = "shell" // tools that run commands
)

// Canonical events: the names Rewind uses for the moments of a session,
// whatever the agent calls them (an agent's profile maps each to its own).
const (
	EventSessionStart = "SessionStart"
	EventPrompt       = "UserPromptSubmit"
	EventPreTool      = "PreToolUse"
	EventPostTool     = "PostToolUse"
	EventStop         = "Stop"
	EventPreCompact   = "PreCompact"
	EventSessionEnd   = "SessionEnd"
)

// Tier is one embedded tier file: the hook's runtime settings and which
// events checkpoint. It names no agent: each agent's profile says what its
// events and tools are called, so an agent is added without touching a tier.
type Tier struct {
	Version     int    `json:"version"`
	Name        string `json:"name"`
	Description string `json:"description"`

	MinIntervalMS     int64 `json:"min_interval_ms"`     // anti-spam for throttled checkpoints
	MinChangedFiles   int   `json:"min_changed_files"`   // significance for throttled checkpoints
	RetentionBudgetMS int64 `json:"retention_budget_ms"` // time retention may take at session start
	HookTimeoutS      int   `json:"hook_timeout_s"`      // the timeout registered with the agent

	Hooks []Hook `json:"hooks"` // in registration order
}

// Hook is one event the tier listens to: a canonical event, for tool events
// the class of tools (none: every tool), and what the event calls for.
type Hook struct {
	Event      string    `json:"event"`
	Tools      ToolClass `json:"tools,omitempty"`
	Checkpoint Policy    `json:"checkpoint"`
}

// TierNames lists the embedded tiers from least to most checkpoints.
func TierNames() []string { return []string{"minimal", "balanced", "aggressive"} }

// LoadTier returns the embedded tier of that name.
func LoadTier(name string) (*Tier, error) {
	if !slices.Contains(TierNames(), name) {
		return nil, fmt.Errorf("unknown tier %q (tiers: %s)", name, strings.Join(TierNames(), ", "))
	}
	b, err := tierFS.ReadFile(path.Join("tiers", name+".json"))
	if err != nil {
		return nil, err
	}
	t := new(Tier)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("tier %s: %w", name, err)
	}
	return t, nil
}

// Checkpoint is what a canonical event calls for under the tier for agent
// a: the policy of the first hook for that event whose tool class is the
// tool's (or that names no class), or CheckpointNone when the tier listens
// to nothing there (an event from a hook registered by another tier still
// keeps session.json current). An agent's own policy for an event (its
// profile's event_policy) caps the tier's.
func (t *Tier) Checkpoint(a *Agent, event, tool string) Policy {
	for _, h := range t.Hooks {
		if h.Event != event || (h.Tools != "" && a.ToolClass(tool) != h.Tools) {
			continue
		}
		if p, ok := a.EventPolicy[event]; ok && p == CheckpointNone {
			return CheckpointNone
		} else if ok && p == CheckpointThrottled && h.Checkpoint == CheckpointAlways {
			return CheckpointThrottled
		}
		return h.Checkpoint
	}
	return CheckpointNone
}

// Entries are the hook registrations of the tier for agent a, each running
// hookPath (absolute) with the event's action. Events the agent does not
// have are left out, and so are those its profile gives no checkpoint
// (event_policy "none": Gemini CLI's PreCompress fires before every model
// call, where a hook would only cost a process); where the agent's hooks
// take no tool matcher, one entry per event serves every tool class
// (rewind-hook tells them apart).
func (t *Tier) Entries(a *Agent, hookPath string) ([]Entry, error) {
	var out []Entry
	for _, h := range t.Hooks {
		action, ok := ActionForEvent(h.Event)
		if !ok {
			return nil, fmt.Errorf("tier %s: unknown event %q", t.Name, h.Event)
		}
		native, ok := a.Events[h.Event]
		if !ok || a.EventPolicy[h.Event] == CheckpointNone {
			continue
		}
		e := Entry{
			Event:   native,
			Command: cmdline.ShellQuote(hookPath) + " " + action + " --agent " + a.Name + a.HookFile.CommandSuffix,
			Timeout: t.HookTimeoutS,
		}
		if h.Tools != "" {
			e.Matcher = a.matcher(h.Tools)
		}
		if slices.ContainsFunc(out, func(o Entry) bool { return o.key() == e.key() }) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

var actions = [][2]string{
	{"session-start", EventSessionStart},
	{"user-prompt-submit", EventPrompt},
	{"pre-tool-use", EventPreTool},
	{"post-tool-use", EventPostTool},
	{"stop", EventStop},
	{"pre-compact", EventPreCompact},
	{"session-end", EventSessionEnd},
}

// Actions lists rewind-hook's actions (its subcommands), in event order.
func Actions() []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a[0]
	}
	return out
}

// EventForAction maps an action ("pre-tool-use") to its canonical event
// ("PreToolUse").
func EventForAction(action string) (string, bool) {
	for _, a := range actions {
		if a[0] == action {
			return a[1], true
		}
	}
	return "", false
}

// ActionForEvent maps a canonical event to its action.
func ActionForEvent(event string) (string, bool) {
	for _, a := range actions {
		if a[1] == event {
			return a[0], true
		}
	}
	return "", false
}
