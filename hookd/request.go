// Package hookd is Rewind's side of the agents' hook protocols: it parses
// what an agent sends to a hook (the hooks section of each agent's manifest
// in rewind.dev/internal/agents says its event names, payload keys and
// hook-file shape), detects the agent, applies the tier (which events
// checkpoint, anti-spam, significance), writes the agent's env file,
// registers hooks in the agents' settings files, and hands store work to
// the rewind binary as a Request on its stdin.
package hookd

// RequestVersion is the version of Request this package writes.
const RequestVersion = 1

// Request is what rewind-hook sends to `rewind hook` (on stdin, one JSON
// object) after deciding what an agent event calls for. rewind owns the
// store: it applies the request under the store lock and answers with a
// Response on stdout.
type Request struct {
	Version int    `json:"version"`
	Event   string `json:"event"` // the agent's hook_event_name, e.g. "UserPromptSubmit", "PreToolUse"
	Agent   string `json:"agent"` // "claude", "droid"

	ProjectDir     string `json:"project_dir"` // absolute; the store belongs to it
	Cwd            string `json:"cwd,omitempty"`
	SessionID      string `json:"session_id,omitempty"`
	TranscriptPath string `json:"transcript_path,omitempty"` // may not exist yet (Claude writes it after the first prompt)
	EnvFile        string `json:"env_file,omitempty"`

	Tool   string `json:"tool,omitempty"`   // tool name for tool events
	File   string `json:"file,omitempty"`   // the file a tool event names, if any
	Prompt string `json:"prompt,omitempty"` // the first 200 characters of a UserPromptSubmit prompt

	// Checkpoint says whether to take one: "always" (session start, prompt
	// boundaries: never skipped), "throttled" (tool events: skipped within
	// MinIntervalMS of the previous checkpoint, or when fewer than
	// MinChangedFiles files changed since it), or "none" (only keep
	// session.json current).
	Checkpoint      Policy `json:"checkpoint"`
	MinIntervalMS   int64  `json:"min_interval_ms,omitempty"`
	MinChangedFiles int    `json:"min_changed_files,omitempty"`

	// Retention asks rewind to apply the retention policy within
	// RetentionBudgetMS (at session start; rewind also runs it by itself
	// after every 50 new checkpoints).
	Retention         bool  `json:"retention,omitempty"`
	RetentionBudgetMS int64 `json:"retention_budget_ms,omitempty"`

	// DeadlineUnixMS is when rewind must give up (cleanly) so the hook
	// finishes in time.
	DeadlineUnixMS int64 `json:"deadline_unix_ms,omitempty"`

	// AutoInit lets rewind create the project's store when it has none and
	// lies in a git work tree that is neither the home folder nor / (the
	// config's auto_init, on by default).
	AutoInit bool `json:"auto_init,omitempty"`
}

// Action is what a hook event came to.
type Action string

const (
	ActionCheckpoint Action = "checkpoint" // a checkpoint was taken
	ActionSkip       Action = "skip"       // none was taken; Reason says why
)

// SkipReason is why a hook event took no checkpoint.
type SkipReason string

const (
	SkipNoStore   SkipReason = "no-store"  // the project has no store, and none was made
	SkipInterval  SkipReason = "interval"  // inside the tier's interval since the last one
	SkipUnchanged SkipReason = "unchanged" // the tree has not changed enough
	SkipNone      SkipReason = "none"      // the tier takes none at this event
	SkipUntrusted SkipReason = "untrusted" // the project's store is not one this user's Rewind made
)

// Response is what `rewind hook` prints.
type Response struct {
	Type       string     `json:"type"` // "hook"
	Action     Action     `json:"action"`
	Checkpoint string     `json:"checkpoint,omitempty"` // the id taken
	Reason     SkipReason `json:"reason,omitempty"`     // why skipped
	Removed    int        `json:"removed,omitempty"`    // checkpoints retention removed
	// Created is the store rewind made for the project (AutoInit).
	Created string `json:"created,omitempty"`
	// Message is for the person at the agent (a project without a store
	// outside any git work tree): rewind-hook shows it once per project.
	Message string `json:"message,omitempty"`
	// Notice is for the person at the agent, now: rewind gives it once, and only where the
	// agent shows it (Agent.Shows) — a restore rewound the code of this session's project
	// for a fork, while this session's conversation went on.
	Notice string `json:"notice,omitempty"`
	// Warnings are what went wrong without failing the event (a transcript path Rewind would
	// not read): rewind-hook logs them.
	Warnings []string `json:"warnings,omitempty"`
}
