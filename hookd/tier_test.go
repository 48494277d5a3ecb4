package hookd

import (
	"fmt"
	"testing"
)

// TestEventPolicy: an agent's event_policy caps what the tier asks of that event, and an event
// it gives no checkpoint is not registered at all (it would only cost the agent a process each
// time it fires).
func TestEventPolicy(t *testing.T) {
	a, err := parseAgent("x", []byte(`{"events":{"SessionStart":"Start","UserPromptSubmit":"Prompt","PreCompact":"Compress","PreToolUse":"Pre"},
	 "event_policy":{"PreCompact":"none","UserPromptSubmit":"throttled"},"edit_tools":["w"]}`))
	if err != nil {
		t.Fatal(err)
	}
	tier, err := LoadTier("balanced")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		event, tool string
		want        Policy
	}{
		{EventSessionStart, "", CheckpointAlways},
		{EventPrompt, "", CheckpointThrottled},
		{EventPreCompact, "", CheckpointNone},
		{EventPreTool, "w", CheckpointThrottled},
	} {
		if got := tier.Checkpoint(a, tt.event, tt.tool); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.event, got, tt.want)
		}
	}
	es, err := tier.Entries(a, testHook)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, e := range es {
		events = append(events, e.Event)
	}
	if got := fmt.Sprint(events); got != "[Start Prompt Pre]" {
		t.Errorf("registered events %s, want every mapped event but Compress", got)
	}
}
