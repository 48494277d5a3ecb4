package cli

import (
	"errors"
	"testing"

	"rewind.dev/internal/cmdline"
)

// TestHint: register and unregister, run by a person, say what to do; a hook action's error is
// one line without a hint, whatever it is (an agent shows it).
func TestHint(t *testing.T) {
	carried := cmdline.WithHint(errors.New("settings.json: invalid JSON"), "fix the file by hand (it was left as it was), then run this again")
	flagErr := &cmdline.FlagError{Command: "rewind-hook register", Err: errors.New("flag provided but not defined: -x")}
	for _, tc := range []struct {
		settings bool
		err      error
		want     string
	}{
		{true, carried, "fix the file by hand (it was left as it was), then run this again"},
		{true, flagErr, "run 'rewind-hook register --help'"},
		{true, errors.New("plain"), ""},
		{false, carried, ""},
		{false, &cmdline.FlagError{Command: "rewind-hook stop", Err: errors.New("bad")}, ""},
		{false, hookFailure{errors.New("rewind hook: a\nb")}, ""},
	} {
		if got := hint(tc.settings)(tc.err); got != tc.want {
			t.Errorf("hint(settings %v)(%v) = %q, want %q", tc.settings, tc.err, got, tc.want)
		}
	}
	if got := (hookFailure{errors.New("rewind hook: a\n  b")}).Error(); got != "rewind hook: a b" {
		t.Errorf("hookFailure on one line: %q", got)
	}
}
