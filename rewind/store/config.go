package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"rewind.dev/hookd"
	"rewind.dev/internal/layout"
	"rewind.dev/snap"
)

// Config is the configuration of the store's project: ~/.rewind/config.json
// overlaid by the store's config.json (layout.Merge), read once, when the
// store is first asked. Every command that walks the tree takes its ignore
// patterns from here (see walkOptions), so none can forget them.
func (s *Store) Config() (layout.Config, error) {
	c := s.loadConfig()
	return c.config, c.err
}

// Limits are the snapshot limits the configuration sets (zero fields: snap's
// defaults).
func (s *Store) Limits() snap.Limits { return s.loadConfig().limits }

// loadedConfig is the configuration as read once.
type loadedConfig struct {
	config layout.Config
	limits snap.Limits
	err    error
}

// loadConfig reads the configuration the first time it is asked for, once
// even when goroutines sharing the Store ask at the same time.
func (s *Store) loadConfig() *loadedConfig {
	s.configOnce.Do(func() {
		c := &loadedConfig{}
		var err error
		c.config, err = layout.LoadConfig(s.Homes.Rewind, s.Dir)
		if err != nil {
			c.err = fmt.Errorf("config: %w; fix or remove it", err)
		} else if len(c.config.Limits) > 0 {
			if err := json.Unmarshal(c.config.Limits, &c.limits); err != nil {
				c.err = fmt.Errorf("config: limits: %w; fix or remove them", err)
			}
		}
		s.config = c
	})
	return s.config
}

// walkOptions is how this project's tree is walked: with the ignore
// patterns of its configuration, starting by the store's clock (Now). A
// broken config is an error: a walk without its patterns would capture,
// or delete, what the user left out.
func (s *Store) walkOptions() (snap.WalkOptions, error) {
	c, err := s.Config()
	return snap.WalkOptions{Ignore: c.Ignore, Now: s.Now}, err
}

// DefaultMode is where a new store goes: the global config's mode, else global
// (layout.Config.NewStoreMode). A broken global config counts as none. It
// is EnvHomes().DefaultMode.
func DefaultMode() layout.Mode { return EnvHomes().DefaultMode() }

// DefaultMode is where a new store goes in the homes h (see the package's
// DefaultMode).
func (h Homes) DefaultMode() layout.Mode {
	c, _ := layout.LoadConfig(h.Rewind, "")
	return c.NewStoreMode()
}

// GlobalConfigPath is ~/.rewind/config.json.
func GlobalConfigPath() string { return EnvHomes().GlobalConfigPath() }

// GlobalConfigPath is the global config.json in the homes h.
func (h Homes) GlobalConfigPath() string { return layout.GlobalConfig(h.Rewind) }

// ProjectConfigPath is the store's config.json.
func (s *Store) ProjectConfigPath() string { return s.path(layout.ConfigFile) }

// ProjectConfig reads only the project's config.json.
func (s *Store) ProjectConfig() (layout.Config, error) {
	var p layout.Config
	err := layout.ReadJSON(s.ProjectConfigPath(), &p)
	return p, err
}

// SetTier sets the project's tier in its config.json through hookd's
// byte-preserving editor: every other member, and every byte of them, stays
// (hook_deadline_ms, a key of the user's own). Call it under the lock.
func (s *Store) SetTier(tier string) error {
	if _, err := hookd.SetTier(s.ProjectConfigPath(), tier); err != nil {
		return err
	}
	s.config = nil // read again at the next Config
	return nil
}

// ParseAge parses a duration with a d (days) unit besides Go's (h, m, s).
func ParseAge(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	var n float64
	var unit string
	if _, err := fmt.Sscanf(s, "%g%s", &n, &unit); err == nil && (unit == "d" || unit == "w") {
		day := 24 * time.Hour
		if unit == "w" {
			day *= 7
		}
		return time.Duration(n * float64(day)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad age %q: use e.g. 30d, 12h, 90m", s)
	}
	return d, nil
}

// ParseSize parses a size in bytes: a number, optionally with a decimal
// part, and a unit — B, K, M, G or T, with or without a trailing B or iB,
// in any case — each 1024 times the one before: 500M, 2G, 1.5GiB, 4096.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || i == 0 {
		return 0, fmt.Errorf("bad size %q: use e.g. 500M, 2G or a number of bytes", s)
	}
	unit := strings.ToUpper(strings.TrimSpace(t[i:]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "IB"), "B")
	shift := strings.Index("KMGT", unit) + 1
	if len(unit) > 1 || (unit != "" && shift == 0) {
		return 0, fmt.Errorf("bad size %q: the unit is one of B, K, M, G, T", s)
	}
	v := n * float64(int64(1)<<(10*shift))
	if v >= 1<<63 {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return int64(v), nil
}
