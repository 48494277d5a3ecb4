package store

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"rewind.dev/snap"
)

// Config is Rewind's configuration: ~/.rewind/config.json (global) overlaid
// by the store's config.json (project).
type Config struct {
	Version   int       `json:"version"`
	Tier      string    `json:"tier,omitempty"`
	Retention Retention `json:"retention"`
	Ignore    []string  `json:"ignore,omitempty"` // extra gitignore-style patterns
	// Limits raise (or lower) what a snapshot may hold; unset fields keep
	// snap.DefaultLimits. A checkpoint records the limits it was taken
	// within, so its restore needs no setting.
	Limits *snap.Limits `json:"limits,omitempty"`
}

// Retention is the policy gc and the hooks apply by default.
type Retention struct {
	MaxCheckpoints int    `json:"max_checkpoints,omitempty"` // 0: no limit
	MaxAge         string `json:"max_age,omitempty"`         // e.g. "30d", "12h"
	MaxBytes       int64  `json:"max_bytes,omitempty"`
}

// DefaultRetention keeps 30 days and at most 2 GiB per project.
var DefaultRetention = Retention{MaxAge: "30d", MaxBytes: 2 << 30}

// DefaultTier is the tier when none is configured.
const DefaultTier = "balanced"

// GlobalConfigPath is ~/.rewind/config.json.
func GlobalConfigPath() string { return filepath.Join(Home(), "config.json") }

// ProjectConfigPath is the store's config.json.
func (s *Store) ProjectConfigPath() string { return s.path("config.json") }

// Config reads the effective configuration.
func (s *Store) Config() (Config, error) {
	c := Config{Version: Version, Tier: DefaultTier, Retention: DefaultRetention}
	var g, p Config
	if err := readJSON(GlobalConfigPath(), &g); err != nil {
		return c, fmt.Errorf("global config: %w; fix or remove it", err)
	}
	if err := readJSON(s.ProjectConfigPath(), &p); err != nil {
		return c, fmt.Errorf("project config: %w; fix or remove it", err)
	}
	for _, o := range []Config{g, p} {
		if o.Tier != "" {
			c.Tier = o.Tier
		}
		if o.Retention.MaxCheckpoints != 0 {
			c.Retention.MaxCheckpoints = o.Retention.MaxCheckpoints
		}
		if o.Retention.MaxAge != "" {
			c.Retention.MaxAge = o.Retention.MaxAge
		}
		if o.Retention.MaxBytes != 0 {
			c.Retention.MaxBytes = o.Retention.MaxBytes
		}
		c.Ignore = append(c.Ignore, o.Ignore...)
		if o.Limits != nil {
			l := *o.Limits
			if c.Limits != nil {
				l = l.Or(*c.Limits)
			}
			c.Limits = &l
		}
	}
	return c, nil
}

// ProjectConfig reads only the project's config.json.
func (s *Store) ProjectConfig() (Config, error) {
	var p Config
	err := readJSON(s.ProjectConfigPath(), &p)
	p.Version = Version
	return p, err
}

// SetProjectConfig writes the project's config.json.
func (s *Store) SetProjectConfig(c Config) error {
	c.Version = Version
	return writeJSON(s.ProjectConfigPath(), c)
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
