package hookd

import "testing"

// TestShows: a hook's message reaches the person at a session's start and at a prompt, in the
// agents that pass one on; never at other events, nor in Copilot CLI, nor for no agent.
func TestShows(t *testing.T) {
	for _, tc := range []struct {
		agent, event string
		want         bool
	}{
		{"claude", EventPrompt, true},
		{"claude", EventSessionStart, true},
		{"codex", EventPrompt, true},
		{"claude", EventPreTool, false},
		{"claude", EventStop, false},
		{"copilot", EventPrompt, false},
		{"", EventPrompt, false},
	} {
		var a *Agent
		if tc.agent != "" {
			var err error
			if a, err = LookupAgent(tc.agent); err != nil {
				t.Fatal(err)
			}
		}
		if got := a.Shows(tc.event); got != tc.want {
			t.Errorf("%s at %s: Shows = %v, want %v", tc.agent, tc.event, got, tc.want)
		}
	}
}
