package layout

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Version is the version of the files this package describes.
const Version = 1

// DefaultTier is the tier when no config names one.
const DefaultTier = "balanced"

// DefaultRetention keeps 30 days and at most 2 GiB per project.
var DefaultRetention = Retention{MaxAge: "30d", MaxBytes: 2 << 30}

// Config is a config.json: the global one (in Home) or a project's (in its
// store), whose members override the global ones (see Merge). Members a
// reader does not know are kept by every writer (hookd's editor changes
// one member at a time), so a user's own keys survive.
type Config struct {
	Version   int       `json:"version"`
	Tier      string    `json:"tier,omitempty"`
	Retention Retention `json:"retention"`
	Ignore    []string  `json:"ignore,omitempty"` // extra gitignore-style patterns
	// Limits raise (or lower) what a snapshot may hold (snap.Limits' JSON;
	// unset fields keep snap's defaults). Only the porcelain reads them.
	Limits json.RawMessage `json:"limits,omitempty"`
	// Export configures 'rewind export'.
	Export *ExportConfig `json:"export,omitempty"`
	// Global only: where install.sh linked the binaries, how long a hook may
	// take (default hookd.DefaultDeadline), and whether the hooks may create
	// a store in a git work tree that has none (default true).
	BinDir         string `json:"bin_dir,omitempty"`
	HookDeadlineMS int64  `json:"hook_deadline_ms,omitempty"`
	AutoInit       *bool  `json:"auto_init,omitempty"`
	// Mode is where new stores go (global only): ModeGlobal unless set.
	Mode Mode `json:"mode,omitempty"`
}

// ExportConfig configures 'rewind export'.
type ExportConfig struct {
	// Redact are gitignore-style patterns of files 'rewind export --redact'
	// leaves out (and names on stderr without it); nil for DefaultRedact.
	Redact []string `json:"redact,omitempty"`
}

// DefaultRedact is what 'rewind export --redact' leaves out when the
// configuration names nothing: files that commonly hold secrets.
var DefaultRedact = []string{
	".env", ".env.*", "!.env.example", "!.env.sample", "!.env.template",
	"*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".npmrc", ".pypirc", ".netrc", ".git-credentials", "credentials.json", "*.keystore",
}

// RedactPatterns are the configured export.redact patterns, else DefaultRedact.
func (c Config) RedactPatterns() []string {
	if c.Export != nil && c.Export.Redact != nil {
		return c.Export.Redact
	}
	return DefaultRedact
}

// Retention is the policy gc and the hooks apply by default.
type Retention struct {
	MaxCheckpoints int    `json:"max_checkpoints,omitempty"` // 0: no limit
	MaxAge         string `json:"max_age,omitempty"`         // e.g. "30d", "12h"
	MaxBytes       int64  `json:"max_bytes,omitempty"`
}

// AutoInitOn reports the auto_init setting (on unless set false).
func (c Config) AutoInitOn() bool { return c.AutoInit == nil || *c.AutoInit }

// NewStoreMode is where a new store goes: the mode setting, else ModeGlobal — outside the
// project, where nothing run in the project takes the checkpoints with it.
func (c Config) NewStoreMode() Mode {
	if c.Mode == ModeProject {
		return ModeProject
	}
	return ModeGlobal
}

// LoadConfig reads the global config in home (a Home) and, when storeDir
// is not "", the project's in that store, and merges them over the
// defaults. Missing files are fine. On an unreadable or invalid file it
// still returns the best config it has with the error, which names the
// file: a hook can checkpoint and then report the problem.
func LoadConfig(home, storeDir string) (Config, error) {
	var g, p Config
	var errs []error
	if err := ReadJSON(GlobalConfig(home), &g); err != nil {
		errs = append(errs, err)
	}
	if storeDir != "" {
		if err := ReadJSON(storeDir+"/"+ConfigFile, &p); err != nil {
			errs = append(errs, err)
		}
	}
	return Merge(g, p), errors.Join(errs...)
}

// Merge is the effective config of a project: the defaults, overridden by
// the global config, overridden by the project's tier, retention and
// limits; ignore patterns add up. The global-only members come from global.
func Merge(global, project Config) Config {
	c := Config{Version: Version, Tier: DefaultTier, Retention: DefaultRetention,
		BinDir: global.BinDir, HookDeadlineMS: global.HookDeadlineMS, AutoInit: global.AutoInit, Mode: global.Mode}
	for _, o := range []Config{global, project} {
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
		c.Limits = overlay(c.Limits, o.Limits)
		if o.Export != nil && o.Export.Redact != nil {
			c.Export = o.Export // the project's list replaces the global one
		}
	}
	return c
}

// overlay is the JSON object base with the members of top put over it; top
// itself when either is not an object (its reader reports what is wrong).
func overlay(base, top json.RawMessage) json.RawMessage {
	if len(top) == 0 {
		return base
	}
	var b, t map[string]json.RawMessage
	if len(base) == 0 || json.Unmarshal(base, &b) != nil || b == nil || json.Unmarshal(top, &t) != nil || t == nil {
		return top
	}
	for k, v := range t {
		b[k] = v
	}
	out, err := json.Marshal(b)
	if err != nil {
		return top
	}
	return out
}

// Session is what the hooks last learned of the agent session working in
// the project (session.json).
type Session struct {
	Version        int       `json:"version"`
	Agent          string    `json:"agent,omitempty"`
	TranscriptPath string    `json:"transcript_path,omitempty"`
	SessionID      string    `json:"session_id,omitempty"`
	EnvFile        string    `json:"env_file,omitempty"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// SessionRefresh is how old session.json may get before a hook event that
// changes nothing in it rewrites it all the same.
const SessionRefresh = time.Minute

// HookState is what the hooks keep between events (hook-state.json).
type HookState struct {
	Version            int       `json:"version"`
	LastCheckpoint     string    `json:"last_checkpoint,omitempty"`
	LastCheckpointAt   time.Time `json:"last_checkpoint_at,omitempty"`
	SinceRetention     int       `json:"checkpoints_since_retention"`
	LastRetentionAt    time.Time `json:"last_retention_at,omitempty"`
	LastRetentionFreed int64     `json:"last_retention_freed_bytes"`
	LastRetentionCount int       `json:"last_retention_removed"`
	// ToldMove: rewind status has said once that a project-mode store can move out of the
	// project (rewind store move global).
	ToldMove bool `json:"told_move,omitempty"`
	// Rewound is a session a restore left to be told that the code was rewound under it;
	// nil when none is waiting.
	Rewound *RewoundSession `json:"rewound,omitempty"`
}

// RewoundSession is an agent session whose project's code a restore (back --both, or a restore
// of code and conversation) rewound for a fork of its conversation, while the session itself
// was not rewound: what it says no longer matches the files. The session is named by its id
// and its transcript; the hook of its next prompt (or of its start, when it is resumed) tells
// the person, once. A later change of the code replaces it.
type RewoundSession struct {
	Restore    string    `json:"restore"` // the restore's history entry
	At         time.Time `json:"at"`
	Kind       string    `json:"kind"`        // "back" or "restore"
	N          int       `json:"n,omitempty"` // back's count
	SessionID  string    `json:"session_id,omitempty"`
	Transcript string    `json:"transcript,omitempty"`
	Agent      string    `json:"agent,omitempty"`
	Checkpoint string    `json:"checkpoint"` // the code was rewound to it
	Fork       string    `json:"fork"`       // the fork's session id
}

// ReadJSON reads the JSON file name into v; a missing file leaves v as it
// is and is no error. The error of a file that is not JSON names it.
func ReadJSON(name string, v any) error {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(b, se.Offset)
			return fmt.Errorf("%s:%d:%d: %w", name, line, col, err)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// lineCol is the 1-based line and column of the byte that ended a JSON
// syntax error found after reading offset bytes of b.
func lineCol(b []byte, offset int64) (line, col int) {
	at := int(min(max(offset-1, 0), int64(len(b))))
	line, col = 1, 1
	for _, c := range b[:at] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
