package hookd

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRegisterFile: the file-level rules — backup of the previous bytes (the
// newest only),
// mode kept, a symlink stays a symlink, a second run writes nothing, and
// unregister restores the original bytes.
func TestRegisterFile(t *testing.T) {
	orig, err := os.ReadFile("testdata/settings/claude-typical.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "claude-settings.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	if err := os.WriteFile(real, orig, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink("../dotfiles/claude-settings.json", link); err != nil {
		t.Fatal(err)
	}

	c, err := Register(link, "claude", "balanced", testHook)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Changed || c.Target != real || c.Added != 5 || c.Backup == "" {
		t.Errorf("first Register = %+v", c)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the settings symlink is no longer a symlink (%v)", err)
	}
	st, _ := os.Stat(real)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(c.Backup); !bytes.Equal(b, orig) {
		t.Errorf("backup %s does not hold the previous bytes", c.Backup)
	}
	if !strings.HasPrefix(c.Backup, real+".rewind-backup-") {
		t.Errorf("backup %s is not beside the target", c.Backup)
	}
	registered, _ := os.ReadFile(real)

	c2, err := Register(link, "claude", "balanced", testHook)
	if err != nil || c2.Changed || c2.Backup != "" {
		t.Errorf("second Register = %+v, %v; want no change", c2, err)
	}
	if b, _ := os.ReadFile(real); !bytes.Equal(b, registered) {
		t.Error("second Register changed the file")
	}
	es, err := Registered(link, "claude")
	if err != nil || len(es) != 5 {
		t.Errorf("Registered = %v, %v", es, err)
	}

	// A different tier replaces Rewind's entries.
	c3, err := Register(link, "claude", "aggressive", testHook)
	if err != nil || !c3.Changed || c3.Removed != 5 || c3.Added != 7 {
		t.Errorf("Register aggressive = %+v, %v", c3, err)
	}
	aggressive, _ := os.ReadFile(real)

	u, err := Unregister(link, "claude")
	if err != nil || !u.Changed || u.Removed != 7 {
		t.Errorf("Unregister = %+v, %v", u, err)
	}
	// Backups do not pile up: the newest is kept, the bytes before the last change.
	if bs, _ := filepath.Glob(real + ".rewind-backup-*"); len(bs) != 1 || bs[0] != u.Backup {
		t.Errorf("backups beside the file: %v, want only %s", bs, u.Backup)
	}
	if b, _ := os.ReadFile(u.Backup); !bytes.Equal(b, aggressive) {
		t.Errorf("the backup does not hold the bytes before the last change")
	}
	if b, _ := os.ReadFile(real); !bytes.Equal(b, orig) {
		t.Errorf("Unregister did not restore the original bytes:\n%s", b)
	}
	u2, err := Unregister(link, "claude")
	if err != nil || u2.Changed {
		t.Errorf("second Unregister = %+v, %v", u2, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(real), ".*rewind-tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("temp files left: %v", leftovers)
	}
}

func TestRegisterMissingFile(t *testing.T) {
	home := t.TempDir()
	p, err := SettingsPath(home, "claude")
	if err != nil || p != filepath.Join(home, ".claude", "settings.json") {
		t.Fatalf("SettingsPath = %s, %v", p, err)
	}
	if c, err := Unregister(p, "claude"); err != nil || c.Changed {
		t.Errorf("Unregister on a missing file = %+v, %v", c, err)
	}
	if _, err := os.Stat(p); err == nil {
		t.Error("Unregister created the file")
	}
	c, err := Register(p, "claude", "minimal", testHook)
	if err != nil || !c.Changed || c.Backup != "" {
		t.Fatalf("Register = %+v, %v", c, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("new settings file mode %v, want 0600", st.Mode().Perm())
	}
	if _, err := Unregister(p, "claude"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err == nil {
		t.Error("Unregister left the settings file it had created, holding nothing else")
	}
	if _, err := os.Stat(p + createdMarker); err == nil {
		t.Error("Unregister left the created-file marker")
	}
	// A file Rewind created that the user (or the agent) has since added
	// to stays, with what was added.
	if _, err := Register(p, "claude", "minimal", testHook); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	b = bytes.Replace(b, []byte("{"), []byte("{\n  \"model\": \"x\","), 1)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Unregister(p, "claude"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !bytes.Contains(b, []byte(`"model": "x"`)) || bytes.Contains(b, []byte("rewind-hook")) {
		t.Errorf("after Unregister of a file the user added to: %q", b)
	}
}

func TestRegisterRefusesRelativeHook(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	if _, err := Register(p, "claude", "balanced", "rewind-hook"); err == nil {
		t.Error("accepted a relative hook path")
	}
	if _, err := Register(p, "claude", "nope", testHook); err == nil {
		t.Error("accepted an unknown tier")
	}
	if _, err := Register(p, "nosuch", "balanced", testHook); err == nil {
		t.Error("accepted an unknown agent")
	}
	if _, err := os.Stat(p); err == nil {
		t.Error("a refused Register created the file")
	}
}

// TestDroidSettingsPath: Droid reads ~/.factory/hooks.json when it exists
// (events at its top level), else the "hooks" of ~/.factory/settings.json.
func TestDroidSettingsPath(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".factory"), 0o755)
	settings := filepath.Join(home, ".factory", "settings.json")
	os.WriteFile(settings, []byte(`{"customModels": [{"model": "m"}]}`), 0o600)
	p, _ := SettingsPath(home, "droid")
	if p != settings {
		t.Errorf("SettingsPath = %s, want %s", p, settings)
	}
	if _, err := Register(p, "droid", "balanced", testHook); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(settings)
	if !bytes.Contains(b, []byte(`"hooks": {`)) || !bytes.Contains(b, []byte(`rewind-hook pre-tool-use --agent droid`)) {
		t.Errorf("settings.json:\n%s", b)
	}
	hooks := filepath.Join(home, ".factory", "hooks.json")
	os.WriteFile(hooks, []byte("{}\n"), 0o600)
	if p, _ := SettingsPath(home, "droid"); p != hooks {
		t.Errorf("SettingsPath = %s, want %s", p, hooks)
	}
	if _, err := Register(hooks, "droid", "balanced", testHook); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(hooks)
	if !bytes.HasPrefix(b, []byte("{\n  \"SessionStart\": [")) {
		t.Errorf("hooks.json does not hold the events at its top level:\n%s", b)
	}
}

func TestSetConfigTier(t *testing.T) {
	home := t.TempDir()
	changed, err := SetConfigTier(home, "aggressive")
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	p := GlobalConfigPath(home)
	b, _ := os.ReadFile(p)
	if string(b) != "{\n  \"version\": 1,\n  \"tier\": \"aggressive\"\n}\n" {
		t.Errorf("new config:\n%s", b)
	}
	os.WriteFile(p, []byte("{\"version\":1,\"retention\":{\"max_age_days\":30},\"tier\":\"minimal\"}"), 0o644)
	if _, err := SetConfigTier(home, "balanced"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	if string(b) != "{\"version\":1,\"retention\":{\"max_age_days\":30},\"tier\":\"balanced\"}" {
		t.Errorf("edited config: %s", b)
	}
	if changed, _ := SetConfigTier(home, "balanced"); changed {
		t.Error("setting the same tier changed the file")
	}
	if _, err := SetConfigTier(home, "huge"); err == nil {
		t.Error("accepted an unknown tier")
	}
	c, err := LoadConfig(home, "")
	if err != nil || c.Tier != "balanced" || c.HookDeadlineMS != 10000 || c.BinDir != filepath.Join(home, ".local", "bin") {
		t.Errorf("LoadConfig = %+v, %v", c, err)
	}
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".agent", "rewind"), 0o755)
	os.WriteFile(filepath.Join(proj, ".agent", "rewind", "config.json"), []byte(`{"version":1,"tier":"aggressive"}`), 0o644)
	if c, _ := LoadConfig(home, proj); c.Tier != "aggressive" {
		t.Errorf("project override: tier %s", c.Tier)
	}
	os.WriteFile(filepath.Join(proj, ".agent", "rewind", "config.json"), []byte("{\"tier\": \"minimal\",}"), 0o644)
	c, err = LoadConfig(home, proj)
	if err == nil || !strings.Contains(err.Error(), "config.json:1:19: trailing comma") || c.Tier != "balanced" {
		t.Errorf("invalid project config: %+v, %v", c, err)
	}
}

// TestUserEmptyHooksSurvive: a user's own empty "hooks": {} is there again,
// byte for byte, after register, a tier change and unregister; a hooks
// object Register made goes again.
func TestUserEmptyHooksSurvive(t *testing.T) {
	for _, tt := range []struct{ name, src string }{
		{"user's empty object", "{\n  \"hooks\": {},\n  \"model\": \"opus\"\n}\n"},
		{"user's empty object, one line", `{"model": "opus", "hooks": {}}` + "\n"},
		{"no object", "{\n  \"model\": \"opus\"\n}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(p, []byte(tt.src), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, tier := range []string{"balanced", "aggressive"} {
				if _, err := Register(p, "claude", tier, testHook); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := Unregister(p, "claude"); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(p); string(b) != tt.src {
				t.Errorf("after unregister:\n%s\nwant:\n%s", b, tt.src)
			}
			if fileExists(p + userHooksMarker) {
				t.Error("the marker is left behind")
			}
		})
	}
}

// TestUnregisterLeavesNothingItMade: a hook file or bridge Rewind created
// goes with its marker, its backups and the folders Rewind made for it (left
// empty); a folder that was there before stays, as does one that holds
// something else. A bridge installed before the folders were recorded has
// its own folder removed when that is left empty.
func TestUnregisterLeavesNothingItMade(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("COPILOT_HOME", "")
	t.Setenv("PI_CODING_AGENT_DIR", "")
	for _, d := range []string{".copilot", ".pi/agent"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	left := func(root string) []string {
		var out []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if p != root {
				out = append(out, strings.TrimPrefix(p, home+"/"))
			}
			return nil
		})
		return out
	}
	for _, agent := range []string{"copilot", "pi"} {
		p, err := SettingsPath(home, agent)
		if err != nil {
			t.Fatal(err)
		}
		root := filepath.Dir(filepath.Dir(p))                    // ~/.copilot, ~/.pi/agent
		for _, tier := range []string{"minimal", "aggressive"} { // (the second run backs the first up)
			if _, err := Register(p, agent, tier, testHook); err != nil {
				t.Fatal(err)
			}
		}
		if c, err := Unregister(p, agent); err != nil || !c.RemovedFile {
			t.Fatalf("%s: Unregister = %+v, %v", agent, c, err)
		}
		if got := left(root); len(got) > 0 {
			t.Errorf("%s: Unregister left %q", agent, got)
		}
		// A folder that was there before, empty, stays; one that holds
		// something else too.
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := Register(p, agent, "minimal", testHook); err != nil {
			t.Fatal(err)
		}
		if _, err := Unregister(p, agent); err != nil {
			t.Fatal(err)
		}
		if got := left(root); !slices.Equal(got, []string{strings.TrimPrefix(filepath.Dir(p), home+"/")}) {
			t.Errorf("%s: after Unregister with the folder there before: %q", agent, got)
		}
		os.Remove(filepath.Dir(p))
	}
	// A bridge from before the folders were recorded (no marker).
	p, _ := SettingsPath(home, "pi")
	if _, err := Register(p, "pi", "minimal", testHook); err != nil {
		t.Fatal(err)
	}
	os.Remove(p + createdMarker)
	if _, err := Unregister(p, "pi"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Dir(p)); err == nil {
		t.Errorf("an older bridge's folder, left empty, stays")
	}
}
