package fork

import (
	"os"
	"path/filepath"
	"testing"
)

// The OpenCode a fork runs is found on PATH, else at the path the bridge recorded in Rewind's
// own folder — and only when that record and the program it names may be changed by no one
// but their owner. A record anywhere else, or one that another user could have written, is
// never followed.
func TestOpenCodeCommandTrustsOnlyItsOwnRecord(t *testing.T) {
	home := t.TempDir()
	t.Setenv("REWIND_HOME", home)
	t.Setenv("PATH", t.TempDir()) // no opencode on it
	exe := filepath.Join(t.TempDir(), "opencode")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(home, "opencode", "agent.json")
	os.MkdirAll(filepath.Dir(record), 0o700)
	write := func(target string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(record, []byte(`{"version":1,"executable":"`+target+`"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(record, mode)
	}
	for _, c := range []struct {
		name       string
		target     string
		recordMode os.FileMode
		exeMode    os.FileMode
		want       string
	}{
		{"its own record", exe, 0o600, 0o755, exe},
		{"a record others may write", exe, 0o666, 0o755, "opencode"},
		{"a program others may change", exe, 0o600, 0o777, "opencode"},
		{"a program not executable", exe, 0o600, 0o644, "opencode"},
		{"a relative program", "opencode", 0o600, 0o755, "opencode"},
		{"a folder", filepath.Dir(exe), 0o600, 0o755, "opencode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			write(c.target, c.recordMode)
			os.Chmod(exe, c.exeMode)
			if got := openCodeCommand(); got != c.want {
				t.Errorf("openCodeCommand() = %q, want %q", got, c.want)
			}
		})
	}
	// On PATH: that one, whatever the record says.
	bin := t.TempDir()
	onPath := filepath.Join(bin, "opencode")
	os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755)
	t.Setenv("PATH", bin)
	write(exe, 0o600)
	if got := openCodeCommand(); got != onPath {
		t.Errorf("with opencode on PATH: %q, want %q", got, onPath)
	}
}
