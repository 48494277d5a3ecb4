package cli

import "testing"

func TestUsageStatusOnlyForRegistration(t *testing.T) {
	for args, want := range map[string]int{"register": 2, "unregister": 2, "stop": 1, "": 1} {
		var a []string
		if args != "" {
			a = []string{args}
		}
		if got := usageStatus(a); got != want {
			t.Errorf("usageStatus(%q) = %d, want %d", args, got, want)
		}
	}
	if got := usageStatus([]string{"stop", "--bogus", "register"}); got != 1 {
		t.Errorf("a hook action with 'register' as an argument exits %d, want 1", got)
	}
}
