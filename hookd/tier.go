package hookd

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
)

//go:embed tiers/*.json
var tierFS embed.FS

// DefaultTier is the tier used when neither ~/.rewind/config.json nor the
// project names one.
const DefaultTier = "balanced"

// Checkpoint policies of a hook registration (Request.Checkpoint).
const (
	CheckpointAlways    = "always"    // never skipped: session start, prompt boundaries
	CheckpointThrottled = "throttled" // anti-spam interval and significance apply
	CheckpointNone      = "none"      // only keep session.json current
)

// Tier is one embedded tier file: the runtime settings of the hook and the
// hook registrations for every supported agent.
type Tier struct {
	Version     int    `json:"version"`
	Name        string `json:"name"`
	Description string `json:"description"`

	MinIntervalMS     int64 `json:"min_interval_ms"`     // anti-spam for throttled checkpoints
	MinChangedFiles   int   `json:"min_changed_files"`   // significance for throttled checkpoints
	RetentionBudgetMS int64 `json:"retention_budget_ms"` // time retention may take at session start
	HookTimeoutS      int   `json:"hook_timeout_s"`      // the "timeout" registered with the agent

	Hooks map[string][]Hook `json:"hooks"` // agent name → registrations, in registration order
}

// Hook is one registration: an agent event, an optional tool matcher (the
// agent's syntax), and what the event calls for.
type Hook struct {
	Event      string `json:"event"`
	Matcher    string `json:"matcher,omitempty"`
	Checkpoint string `json:"checkpoint"`
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

// Checkpoint is what an event calls for under the tier: the policy of the
// agent's first registration for that event whose matcher matches tool, or
// CheckpointNone when the tier registers nothing for it (an event from a
// hook registered by another tier still keeps session.json current).
func (t *Tier) Checkpoint(agent, event, tool string) string {
	for _, h := range t.Hooks[agent] {
		if h.Event == event && matcherMatches(h.Matcher, tool) {
			return h.Checkpoint
		}
	}
	return CheckpointNone
}

// matcherMatches applies a hook matcher as Claude Code and Droid do: empty
// or "*" matches everything, letters, digits, '_' and '|' are a list of
// exact names, anything else is a regular expression.
func matcherMatches(matcher, tool string) bool {
	switch {
	case matcher == "" || matcher == "*":
		return true
	case strings.Trim(matcher, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_|") == "":
		return slices.Contains(strings.Split(matcher, "|"), tool)
	}
	re, err := regexp.Compile(matcher)
	return err == nil && re.MatchString(tool)
}

// Entries are the hook registrations of the tier for agent, with the
// command that runs hookPath (absolute) for each event.
func (t *Tier) Entries(agent, hookPath string) ([]Entry, error) {
	hooks, ok := t.Hooks[agent]
	if !ok {
		return nil, fmt.Errorf("tier %s has no hooks for agent %q", t.Name, agent)
	}
	var out []Entry
	for _, h := range hooks {
		action, ok := ActionForEvent(h.Event)
		if !ok {
			return nil, fmt.Errorf("tier %s: unknown event %q", t.Name, h.Event)
		}
		out = append(out, Entry{
			Event:   h.Event,
			Matcher: h.Matcher,
			Command: shellQuote(hookPath) + " " + action + " --agent " + agent,
			Timeout: t.HookTimeoutS,
		})
	}
	return out, nil
}

var actions = [][2]string{
	{"session-start", "SessionStart"},
	{"user-prompt-submit", "UserPromptSubmit"},
	{"pre-tool-use", "PreToolUse"},
	{"post-tool-use", "PostToolUse"},
	{"stop", "Stop"},
	{"pre-compact", "PreCompact"},
	{"session-end", "SessionEnd"},
}

// Actions lists rewind-hook's actions (its subcommands), in event order.
func Actions() []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a[0]
	}
	return out
}

// EventForAction maps an action ("pre-tool-use") to its hook event name
// ("PreToolUse").
func EventForAction(action string) (string, bool) {
	for _, a := range actions {
		if a[0] == action {
			return a[1], true
		}
	}
	return "", false
}

// ActionForEvent maps a hook event name to its action.
func ActionForEvent(event string) (string, bool) {
	for _, a := range actions {
		if a[1] == event {
			return a[0], true
		}
	}
	return "", false
}

// shellQuote quotes s for /bin/sh when it holds anything but safe characters.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sortedEntries is a canonical copy for comparing sets of registrations.
func sortedEntries(es []Entry) []Entry {
	out := slices.Clone(es)
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}
