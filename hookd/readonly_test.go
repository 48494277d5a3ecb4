package hookd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlySettingsRefused: a settings file its owner made read-only is
// refused by register and unregister, saying so, and left byte for byte.
func TestReadOnlySettingsRefused(t *testing.T) {
	orig, err := os.ReadFile("testdata/settings/claude-typical.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	os.WriteFile(p, orig, 0o444)
	if _, err := Register(p, "claude", "balanced", testHook); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("register: %v, want a refusal saying the file is read-only", err)
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, orig) {
		t.Error("register replaced the read-only settings file")
	}
	registered := filepath.Join(dir, "registered.json")
	os.WriteFile(registered, orig, 0o644)
	if _, err := Register(registered, "claude", "balanced", testHook); err != nil {
		t.Fatal(err)
	}
	os.Chmod(registered, 0o444)
	before, _ := os.ReadFile(registered)
	if _, err := Unregister(registered, "claude"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("unregister: %v, want a refusal saying the file is read-only", err)
	}
	if b, _ := os.ReadFile(registered); !bytes.Equal(b, before) {
		t.Error("unregister replaced the read-only settings file")
	}
	for _, f := range []string{p, registered} {
		if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o444 {
			t.Errorf("%s: mode %v, want it left 0444", f, fi.Mode().Perm())
		}
	}
}
