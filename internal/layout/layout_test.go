package layout

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHome(t *testing.T) {
	t.Setenv("REWIND_HOME", "")
	if got := Home("/u"); got != "/u/.rewind" {
		t.Errorf("Home = %s", got)
	}
	t.Setenv("REWIND_HOME", "/elsewhere")
	if got := Home("/u"); got != "/elsewhere" {
		t.Errorf("with REWIND_HOME: Home = %s", got)
	}
	if got := GlobalConfig("/elsewhere"); got != "/elsewhere/config.json" {
		t.Errorf("GlobalConfig = %s", got)
	}
}

// TestGlobalStoreHash pins the hash rule (the first 8 bytes of the path's
// SHA-256, as `printf /p | sha256sum` prints them): stores made by earlier
// versions must still be found.
func TestGlobalStoreHash(t *testing.T) {
	if got := GlobalStore("/h", "/p"); got != "/h/storage/00d74baf14ea415c" {
		t.Errorf("GlobalStore(/p) = %s: the rule changed, and every global store would be lost", got)
	}
}

func TestFindStoreAndStoreRoot(t *testing.T) {
	home := t.TempDir()
	proj := t.TempDir()
	sub := filepath.Join(proj, "a", "b")
	os.MkdirAll(sub, 0o755)
	if _, _, ok := FindStore(home, proj); ok {
		t.Fatal("found a store in an empty folder")
	}
	if _, ok := StoreRoot(home, sub); ok {
		t.Fatal("found a root without a store")
	}
	// Global mode.
	g := GlobalStore(home, proj)
	os.MkdirAll(g, 0o755)
	if dir, mode, ok := FindStore(home, proj); !ok || dir != g || mode != ModeGlobal {
		t.Errorf("global: %s %s %v", dir, mode, ok)
	}
	// Project mode wins over global mode.
	local := filepath.Join(proj, ProjectStore)
	os.MkdirAll(local, 0o755)
	if dir, mode, ok := FindStore(home, proj); !ok || dir != local || mode != ModeProject {
		t.Errorf("project: %s %s %v", dir, mode, ok)
	}
	if root, ok := StoreRoot(home, sub); !ok || root != proj {
		t.Errorf("StoreRoot(%s) = %s %v, want %s", sub, root, ok, proj)
	}
	// A file where the store folder would be is no store.
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, ".agent"), 0o755)
	os.WriteFile(filepath.Join(other, ProjectStore), nil, 0o644)
	if _, _, ok := FindStore(home, other); ok {
		t.Error("a file counted as a store")
	}
}

func TestMerge(t *testing.T) {
	no := false
	g := Config{Tier: "minimal", Retention: Retention{MaxAge: "7d"}, Ignore: []string{"*.log"},
		Limits: json.RawMessage(`{"max_depth": 10, "max_path": 100}`), BinDir: "/bin", HookDeadlineMS: 500, AutoInit: &no}
	p := Config{Tier: "aggressive", Retention: Retention{MaxCheckpoints: 9}, Ignore: []string{"tmp/"},
		Limits: json.RawMessage(`{"max_depth": 20}`), BinDir: "/project/bin", HookDeadlineMS: 1}
	c := Merge(g, p)
	if c.Tier != "aggressive" || c.Retention != (Retention{MaxCheckpoints: 9, MaxAge: "7d", MaxBytes: DefaultRetention.MaxBytes}) {
		t.Errorf("tier and retention: %+v", c)
	}
	if strings.Join(c.Ignore, ",") != "*.log,tmp/" {
		t.Errorf("ignore: %v", c.Ignore)
	}
	var lim map[string]int
	if err := json.Unmarshal(c.Limits, &lim); err != nil || lim["max_depth"] != 20 || lim["max_path"] != 100 {
		t.Errorf("limits: %s", c.Limits)
	}
	if c.BinDir != "/bin" || c.HookDeadlineMS != 500 || c.AutoInitOn() {
		t.Errorf("global-only members: %+v", c)
	}
	if d := Merge(Config{}, Config{}); d.Tier != DefaultTier || d.Retention != DefaultRetention || !d.AutoInitOn() || d.Limits != nil {
		t.Errorf("defaults: %+v", d)
	}
}

func TestLoadConfig(t *testing.T) {
	home, store := t.TempDir(), t.TempDir()
	c, err := LoadConfig(home, store)
	if err != nil || c.Tier != DefaultTier {
		t.Fatalf("no files: %+v %v", c, err)
	}
	os.WriteFile(GlobalConfig(home), []byte(`{"version":1,"tier":"minimal","mine":[1]}`), 0o644)
	os.WriteFile(filepath.Join(store, ConfigFile), []byte("{\n  \"tier\": \"aggressive\",\n}"), 0o644)
	c, err = LoadConfig(home, store)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(store, ConfigFile)+":3:1:") {
		t.Errorf("a broken project file is named with its line: %v", err)
	}
	if c.Tier != "minimal" {
		t.Errorf("the best config is still returned: tier %q", c.Tier)
	}
}
