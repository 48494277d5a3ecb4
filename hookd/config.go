package hookd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
)

// DefaultDeadline is how long rewind-hook gives one event when the config
// says nothing: well under every agent's hook timeout (the registrations
// ask for 30 s; Droid's default is 60 s, Copilot's 30 s; the bridges wait
// 15 s).
const DefaultDeadline = 10 * time.Second

// LoadConfig is the config an event in projectDir runs with: the global
// config.json and the project's (in its store, when it has one) merged by
// layout.Merge, with rewind-hook's defaults for the bin dir and the
// deadline. On an unreadable or invalid file it still returns the best
// config it has with the error, so a hook can checkpoint and then report
// the problem.
func LoadConfig(home, projectDir string) (layout.Config, error) {
	store := ""
	if projectDir != "" {
		store, _, _ = layout.FindStore(layout.Home(home), absPath(projectDir))
	}
	c, err := layout.LoadConfig(layout.Home(home), store)
	if err != nil {
		// hookd's own parser says what is wrong more exactly (a trailing
		// comma, where it is).
		files := []string{GlobalConfigPath(home)}
		if store != "" {
			files = append(files, filepath.Join(store, layout.ConfigFile))
		}
		var exact []error
		for _, p := range files {
			if b, rerr := os.ReadFile(p); rerr == nil {
				if _, perr := parseObject(b, p); perr != nil {
					exact = append(exact, perr)
				}
			}
		}
		if len(exact) > 0 {
			err = errors.Join(exact...)
		}
	}
	if c.BinDir == "" {
		c.BinDir = filepath.Join(home, ".local", "bin")
	}
	if c.HookDeadlineMS <= 0 {
		c.HookDeadlineMS = DefaultDeadline.Milliseconds()
	}
	return c, err
}

// GlobalConfigPath is ~/.rewind/config.json (home is the user's home).
func GlobalConfigPath(home string) string { return layout.GlobalConfig(layout.Home(home)) }

// StoreRoot is the project a folder belongs to, as the rewind CLI finds it: the nearest folder,
// dir or above, that has a store; dir itself when none has. An agent started in a subfolder of
// the project checkpoints the project.
func StoreRoot(dir string) string {
	home, _ := os.UserHomeDir()
	if root, ok := layout.StoreRoot(layout.Home(home), dir); ok {
		return root
	}
	return dir
}

// StoreDir is the store of exactly projectDir, "" when it has none.
func StoreDir(projectDir string) string {
	home, _ := os.UserHomeDir()
	dir, _, _ := layout.FindStore(layout.Home(home), absPath(projectDir))
	return dir
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// SetConfigTier writes tier into ~/.rewind/config.json (see SetTier).
func SetConfigTier(home, tier string) (bool, error) {
	return SetTier(GlobalConfigPath(home), tier)
}

// SetTier writes tier into the config.json at path — the global one or a
// project's — creating the file as {"version": 1, "tier": …} or changing only
// the "tier" member of an existing one (every other byte stays, keys Rewind
// does not know too). It reports whether the file changed.
func SetTier(path, tier string) (bool, error) {
	if _, err := LoadTier(tier); err != nil {
		return false, err
	}
	return setConfigString(path, "tier", tier)
}

// SetConfigBinDir records where the binaries are linked (install.sh
// --bin-dir), which SessionStart puts first on the agent's PATH.
func SetConfigBinDir(home, dir string) (bool, error) {
	if !filepath.IsAbs(dir) {
		return false, fmt.Errorf("bin dir %q is not absolute", dir)
	}
	return setConfigString(GlobalConfigPath(home), "bin_dir", dir)
}

// setConfigString sets the string member key of the config file at path
// with the byte-preserving editor, the one way Rewind writes a config.
func setConfigString(path, key, value string) (bool, error) {
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
	// A store's config.json is private as the store is; so is the global one, a
	// file of the same kind (its folder made private only where it is made here).
	if err := durable.FaultOr("mkdir", filepath.Dir(path), func() error { return os.MkdirAll(filepath.Dir(path), layout.DirMode) }); err != nil {
		return false, err
	}
	return true, durable.WriteFile(path, src, layout.FileMode, durable.KeepOwner)
}
