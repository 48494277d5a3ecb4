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
	if got := legacyGlobalStore("/h", "/p"); got != "/h/storage/00d74baf14ea415c" {
		t.Errorf("legacyGlobalStore(/p) = %s: the rule changed, and every global store made before ids would be lost", got)
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
	// Global mode: a store made before ids, under the hash of the path.
	legacy := legacyGlobalStore(home, proj)
	os.MkdirAll(legacy, 0o755)
	if dir, mode, ok := FindStore(home, proj); !ok || dir != legacy || mode != ModeGlobal {
		t.Errorf("global, before ids: %s %s %v", dir, mode, ok)
	}
	// One the project index names wins over it.
	g := GlobalStore(home, "3a6c5e0e-9a3c-4d0e-8f1a-0a5b6c7d8e9f")
	os.MkdirAll(g, 0o755)
	os.MkdirAll(filepath.Dir(ProjectIndex(home, proj)), 0o700)
	os.WriteFile(ProjectIndex(home, proj), []byte(filepath.Base(g)+"\n"), 0o600)
	if dir, mode, ok := FindStore(home, proj); !ok || dir != g || mode != ModeGlobal {
		t.Errorf("global, by the project index: %s %s %v", dir, mode, ok)
	}
	// And one the repository's mark names wins over both (the repository moved here).
	marked := GlobalStore(home, "c1b8a1f0-5d2e-4f3a-9b7c-6d5e4f3a2b1c")
	os.MkdirAll(marked, 0o755)
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	os.WriteFile(filepath.Join(proj, ".git", GitMark), []byte(filepath.Base(marked)+"\n"), 0o600)
	if dir, _, ok := FindStore(home, proj); !ok || dir != marked {
		t.Errorf("global, by the repository's mark: %s %v", dir, ok)
	}
	// A mark or an index entry that is no id names nothing.
	os.WriteFile(filepath.Join(proj, ".git", GitMark), []byte("../../etc\n"), 0o600)
	if dir, _, _ := FindStore(home, proj); dir != g {
		t.Errorf("a mark that is no id: %s", dir)
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
