package hookd

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRewindHomeAndStoreDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("REWIND_HOME", "")
	if got, want := GlobalConfigPath(home), filepath.Join(home, ".rewind", "config.json"); got != want {
		t.Errorf("GlobalConfigPath = %s, want %s", got, want)
	}
	rh := t.TempDir()
	t.Setenv("REWIND_HOME", rh)
	if got, want := GlobalConfigPath(home), filepath.Join(rh, "config.json"); got != want {
		t.Errorf("with REWIND_HOME: GlobalConfigPath = %s, want %s", got, want)
	}
	proj := t.TempDir()
	// No store: none to read or skip from.
	if got := StoreDir(proj); got != "" {
		t.Errorf("no store: StoreDir = %s", got)
	}
	// A global-mode store under REWIND_HOME/storage/<hash>/ is found.
	os.WriteFile(filepath.Join(rh, "config.json"), []byte(`{"version":1,"tier":"minimal"}`), 0o644)
	c0, _ := LoadConfig(home, proj)
	if c0.Tier != "minimal" {
		t.Fatalf("global tier not read from REWIND_HOME: %q", c0.Tier)
	}
}
