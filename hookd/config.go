package hookd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// DefaultDeadline is how long rewind-hook gives one event when the config
// says nothing: well under every agent's hook timeout (the registrations
// ask for 30 s; Droid's default is 60 s, Copilot's 30 s; the bridges wait
// 15 s).
const DefaultDeadline = 10 * time.Second

// Config is what rewind-hook reads of ~/.rewind/config.json and of the
// project's .agent/rewind/config.json (which overrides the tier). Other
// members (retention, …) belong to the rewind porcelain and are ignored here.
type Config struct {
	Version        int    `json:"version"`
	Tier           string `json:"tier,omitempty"`
	BinDir         string `json:"bin_dir,omitempty"`          // where install.sh linked the binaries
	HookDeadlineMS int64  `json:"hook_deadline_ms,omitempty"` // default DefaultDeadline
	// AutoInit, when false, keeps the hooks from creating a store in a git
	// work tree that has none (default true).
	AutoInit *bool `json:"auto_init,omitempty"`
}

// AutoInitOn reports the auto_init setting (on unless set false).
func (c Config) AutoInitOn() bool { return c.AutoInit == nil || *c.AutoInit }

// RewindHome is Rewind's own folder: $REWIND_HOME, else ~/.rewind (the
// rewind porcelain uses the same rule).
func RewindHome(home string) string {
	if h := os.Getenv("REWIND_HOME"); h != "" {
		return h
	}
	return filepath.Join(home, ".rewind")
}

// GlobalConfigPath is ~/.rewind/config.json.
func GlobalConfigPath(home string) string { return filepath.Join(RewindHome(home), "config.json") }

// ProjectConfigPath is the project's override file: in its store, which is
// <project>/.agent/rewind/ (project mode) or, when that does not exist,
// ~/.rewind/storage/<hash of the project path>/ (global mode). The hash rule
// is the porcelain's (rewind/store.GlobalDir); a test there keeps the two
// in step.
func ProjectConfigPath(projectDir string) string {
	if dir, ok := storeDir(projectDir); ok {
		return filepath.Join(dir, "config.json")
	}
	return filepath.Join(projectDir, ".agent", "rewind", "config.json")
}

// storeDir is the store of exactly projectDir, if it has one.
func storeDir(projectDir string) (string, bool) {
	local := filepath.Join(projectDir, ".agent", "rewind")
	if fi, err := os.Stat(local); err == nil && fi.IsDir() {
		return local, true
	}
	home, _ := os.UserHomeDir()
	abs, err := filepath.Abs(projectDir)
	if err != nil {
		abs = projectDir
	}
	sum := sha256.Sum256([]byte(abs))
	global := filepath.Join(RewindHome(home), "storage", hex.EncodeToString(sum[:8]))
	if fi, err := os.Stat(global); err == nil && fi.IsDir() {
		return global, true
	}
	return "", false
}

// StoreRoot is the project a folder belongs to, as the rewind CLI finds it: the nearest folder,
// dir or above, that has a store; dir itself when none has. An agent started in a subfolder of
// the project checkpoints the project.
func StoreRoot(dir string) string {
	for d := dir; ; {
		if _, ok := storeDir(d); ok {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// LoadConfig reads the global config and lets the project's tier override
// it. Missing files are fine. On an unreadable or invalid file it still
// returns the best config it has (the defaults filled in) with the error,
// so a hook can checkpoint and then report the problem.
func LoadConfig(home, projectDir string) (Config, error) {
	c := Config{Version: 1}
	var errs []error
	if err := readConfig(GlobalConfigPath(home), &c); err != nil {
		errs = append(errs, err)
	}
	if projectDir != "" {
		var p Config
		if err := readConfig(ProjectConfigPath(projectDir), &p); err != nil {
			errs = append(errs, err)
		} else if p.Tier != "" {
			c.Tier = p.Tier
		}
	}
	if c.Tier == "" {
		c.Tier = DefaultTier
	}
	if c.BinDir == "" {
		c.BinDir = filepath.Join(home, ".local", "bin")
	}
	if c.HookDeadlineMS <= 0 {
		c.HookDeadlineMS = DefaultDeadline.Milliseconds()
	}
	return c, errors.Join(errs...)
}

func readConfig(path string, c *Config) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := parseObject(b, path); err != nil {
		return err
	}
	if err := json.Unmarshal(b, c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// SetConfigTier writes tier into ~/.rewind/config.json, creating the file as
// {"version": 1, "tier": …} or changing only the "tier" member of an existing
// one (every other byte stays). It reports whether the file changed.
func SetConfigTier(home, tier string) (bool, error) {
	if _, err := LoadTier(tier); err != nil {
		return false, err
	}
	return setConfigString(home, "tier", tier)
}

// SetConfigBinDir records where the binaries are linked (install.sh
// --bin-dir), which SessionStart puts first on the agent's PATH.
func SetConfigBinDir(home, dir string) (bool, error) {
	if !filepath.IsAbs(dir) {
		return false, fmt.Errorf("bin dir %q is not absolute", dir)
	}
	return setConfigString(home, "bin_dir", dir)
}

func setConfigString(home, key, value string) (bool, error) {
	path := GlobalConfigPath(home)
	old, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		old = nil
	} else if err != nil {
		return false, err
	}
	src := old
	if src == nil {
		src = []byte("{\n  \"version\": 1\n}\n")
	}
	root, err := parseObject(src, path)
	if err != nil {
		return false, err
	}
	if i := root.member(key); i >= 0 {
		v := root.elems[i].val
		src = splice(src, v.start, v.end, jsonString(value))
	} else {
		src = insertElem(src, root, root, jv{key: key, lit: jsonString(value)})
	}
	if old != nil && string(src) == string(old) {
		return false, nil
	}
	if err := faultOr("mkdir", filepath.Dir(path), func() error { return os.MkdirAll(filepath.Dir(path), 0o755) }); err != nil {
		return false, err
	}
	return true, writeAtomic(path, src, 0o644)
}
