package cli

import (
	"strings"
	"testing"
)

func TestFailStatus(t *testing.T) {
	for _, tt := range []struct {
		args       string
		code, want int
	}{
		{"register", 2, 2},
		{"unregister", 2, 2},
		{"register", 1, 1},
		{"stop", 2, 1},
		{"", 2, 1},
		{"stop", 130, 130},
		{"stop --bogus register", 2, 1},          // 'register' as an argument decides nothing
		{"pre-tool-use --agent claude", 2, 1},    // never 2: it blocks the tool
		{"pre-tool-use --agent copilot", 1, 0},   // any non-zero exit denies Copilot's tool
		{"pre-tool-use --agent=copilot", 130, 0}, // interrupted too
		{"pre-tool-use --agent nosuch", 1, 1},
	} {
		if got := failStatus(strings.Fields(tt.args), tt.code); got != tt.want {
			t.Errorf("failStatus(%q, %d) = %d, want %d", tt.args, tt.code, got, tt.want)
		}
	}
}
