package hookd

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"rewind.dev/internal/agents"
)

// Agent is one agent's hook profile, the "hooks" section of its manifest
// (rewind.dev/internal/agents): what its hooks are called and send, where
// they are registered and in what shape, how it names the project, its
// tools. Adding an agent whose hooks follow one of the known shapes is
// adding a profile.
type Agent struct {
	Name        string `json:"-"` // the manifest's: "claude", "droid", …
	DisplayName string `json:"-"` // the manifest's: "Claude Code"
	Executable  string `json:"-"` // the manifest's: the agent's command, to tell whether it is installed
	// manifest is the agent's manifest, whose folders the paths below are templates over
	// ("{home}/settings.json": see rewind.dev/internal/agents).
	manifest *agents.Agent

	// Settings are the files the agent reads hooks from, in order of
	// preference: the first that exists (or, when none does, the last one
	// without OnlyIfExists) is the one to register in.
	Settings []SettingsFile `json:"settings"`
	// HookFile is the shape of the hook entries in that file.
	HookFile HookFile `json:"hook_file"`
	// Trust, when set, is the agent's gate on user hooks (Codex): it runs a hook only when
	// a config file records the hook's hash, so registering writes those records too.
	Trust *TrustRule `json:"trust,omitempty"`

	// Events maps each canonical event (EventSessionStart, …) to the
	// agent's own name for it; an event the agent lacks is absent.
	Events map[string]string `json:"events"`
	// EventPolicy caps the tier's policy for a canonical event where the
	// agent's event fires more often than its name says (Gemini's
	// PreCompress fires before every model call).
	EventPolicy map[string]Policy `json:"event_policy,omitempty"`
	// Payload maps the canonical stdin keys (session_id, transcript_path,
	// cwd, hook_event_name, prompt, tool_name, tool_input) to the agent's
	// own where they differ (Copilot's camelCase).
	Payload map[string]string `json:"payload,omitempty"`
	// TranscriptPath derives the transcript from the session id where the
	// payload names none ("{home}/session-state/{session_id}/events.jsonl").
	TranscriptPath string `json:"transcript_path,omitempty"`
	// FailsClosed: any non-zero exit (or a thrown error in a bridge) blocks
	// the agent's tool, so the hook must exit 0 whatever happens.
	FailsClosed bool `json:"fails_closed,omitempty"`
	// Notify is how a hook shows the person a line: "system_message" (a
	// {"systemMessage": …} object on stdout, which Claude Code, Droid and
	// Codex show, and the bridges pass on) or "" (only hook.log).
	Notify string `json:"notify,omitempty"`

	// SessionEnv are env vars that a command the agent runs (its shell tool) sees holding the
	// session's id (Codex's CODEX_THREAD_ID), so rewind run by the agent finds its session.
	SessionEnv []string `json:"session_env,omitempty"`
	// StatusLine: the agent runs a status-line command named in its settings file
	// (Claude Code's statusLine), which `install.sh --statusline` points at `rewind statusline`.
	StatusLine bool `json:"status_line,omitempty"`

	ProjectDirEnv   []string `json:"project_dir_env"`    // env vars naming the project, first set wins
	DetectEnv       []string `json:"detect_env"`         // env vars only this agent sets
	DetectStdinKeys []string `json:"detect_stdin_keys"`  // payload keys only this agent sends
	EnvFileEnv      string   `json:"env_file_env"`       // env var naming the SessionStart env file
	EnvFileStdinKey string   `json:"env_file_stdin_key"` // stdin key naming it (Droid); wins over EnvFileEnv

	EditTools  []string `json:"edit_tools"`  // tools that write files
	ShellTools []string `json:"shell_tools"` // tools that run commands
	FileKeys   []string `json:"file_keys"`   // tool_input keys that name the file a tool touches
	PatchKeys  []string `json:"patch_keys"`  // tool_input keys holding an apply_patch-style patch
}

// SettingsFile is one file an agent reads hooks from.
type SettingsFile struct {
	Path         string `json:"path"`           // a path template of the manifest: "{home}/settings.json"
	HooksKey     string `json:"hooks_key"`      // the top-level key holding the events; "" = the events are the top level
	OnlyIfExists bool   `json:"only_if_exists"` // the agent reads it only when it exists
}

// HookFile is the shape of an agent's hook registrations.
type HookFile struct {
	// Layout is "grouped" (event → [{"matcher", "hooks": [entry]}], Claude
	// Code's), "flat" (event → [entry], Copilot's) or "bridge" (the agent
	// has no shell hooks: Rewind installs an extension file of its own).
	Layout string `json:"layout"`
	// Matcher is the syntax of a group's tool matcher: "names" (a|b|c),
	// "regex" (^(a|b)$), or "none" (every tool fires the hook).
	Matcher     string `json:"matcher"`
	CommandKey  string `json:"command_key"`  // "command"; Copilot "bash"
	TimeoutKey  string `json:"timeout_key"`  // "timeout"; Copilot "timeoutSec"
	TimeoutUnit string `json:"timeout_unit"` // "s" or "ms"
	Name        string `json:"name"`         // a "name" member for each entry (Gemini), "" for none
	// Template is what a new settings file starts as ("{}" when empty).
	Template string `json:"template"`
	// CommandSuffix ends each registered command: "; exit 0" where any non-zero exit (even
	// of a shell that cannot find rewind-hook) would deny the agent's tool (Copilot).
	CommandSuffix string `json:"command_suffix,omitempty"`
	// Bridge is the embedded bridge file (bridges/<name>) for layout "bridge".
	Bridge string `json:"bridge"`
}

// profiles parses the hooks section of every manifest that has one, on
// first use, not at start-up: every rewind process links this package, and
// most never look at an agent.
var profiles = sync.OnceValue(func() map[string]*Agent {
	m := map[string]*Agent{}
	for _, man := range agents.All() {
		if man.Hooks == nil {
			continue
		}
		a, err := parseAgent(man.Name, man.Hooks)
		if err != nil {
			panic(fmt.Sprintf("hookd: agent %s: %v", man.Name, err))
		}
		a.DisplayName, a.Executable, a.manifest = man.DisplayName, man.Executable, man
		if a.Trust != nil {
			a.Trust.homeVar = man.HomeVar()
		}
		m[a.Name] = a
	}
	return m
})

// parseAgent reads the profile of the agent name and fills in the defaults of Claude Code's
// hook shape, which most agents copy.
func parseAgent(name string, b []byte) (*Agent, error) {
	a := new(Agent)
	if err := json.Unmarshal(b, a); err != nil {
		return nil, err
	}
	a.Name = name
	hf := &a.HookFile
	for _, d := range []struct {
		v   *string
		def string
	}{
		{&hf.Layout, "grouped"}, {&hf.Matcher, "names"}, {&hf.CommandKey, "command"},
		{&hf.TimeoutKey, "timeout"}, {&hf.TimeoutUnit, "s"}, {&hf.Template, "{}"},
	} {
		if *d.v == "" {
			*d.v = d.def
		}
	}
	if len(a.Events) == 0 {
		return nil, fmt.Errorf("profile %q maps no events", a.Name)
	}
	for ev := range a.Events {
		if _, ok := ActionForEvent(ev); !ok {
			return nil, fmt.Errorf("profile %q: unknown canonical event %q", a.Name, ev)
		}
	}
	return a, nil
}

// AgentNames lists the agents Rewind has hook profiles for, sorted.
func AgentNames() []string {
	var names []string
	for _, man := range agents.All() {
		if profiles()[man.Name] != nil {
			names = append(names, man.Name)
		}
	}
	return names
}

// StatusLineAgent is the agent whose settings name a status-line command (see
// Agent.StatusLine), nil when none does.
func StatusLineAgent() *Agent {
	for _, name := range AgentNames() {
		if a := profiles()[name]; a.StatusLine {
			return a
		}
	}
	return nil
}

// LookupAgent returns the profile of the named agent.
func LookupAgent(name string) (*Agent, error) {
	if a, ok := profiles()[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("unknown agent %q (known: %s)", name, strings.Join(AgentNames(), ", "))
}

// SettingsPath is the file under home that the agent reads its hooks from
// and that Register should merge into: Claude Code's ~/.claude/settings.json;
// Droid's ~/.factory/hooks.json when that exists, else ~/.factory/settings.json.
func SettingsPath(home, agent string) (string, error) {
	a, err := LookupAgent(agent)
	if err != nil {
		return "", err
	}
	f := a.settingsFile(home)
	return a.path(f.Path, home), nil
}

func (a *Agent) settingsFile(home string) SettingsFile {
	var fallback SettingsFile
	for _, f := range a.Settings {
		if _, err := os.Stat(a.path(f.Path, home)); err == nil {
			return f
		}
		if !f.OnlyIfExists {
			fallback = f
		}
	}
	return fallback
}

// hooksKey is the top-level key holding the hook events in the settings
// file at p: Droid's hooks.json holds them at the top level.
func (a *Agent) hooksKey(p string) string {
	for _, f := range a.Settings {
		if path.Base(f.Path) == filepath.Base(p) {
			return f.HooksKey
		}
	}
	return "hooks"
}

// Installed reports whether the agent looks installed for home: its own
// folder exists or its executable is on PATH.
func (a *Agent) Installed(home string, lookPath func(string) (string, error)) bool {
	if st, err := os.Stat(a.path(a.manifest.Folders.Home, home)); err == nil && st.IsDir() {
		return true
	}
	if lookPath != nil {
		if _, err := lookPath(a.Executable); err == nil {
			return true
		}
	}
	return false
}

// Shows reports whether a message a hook of a gives at event reaches the person: a's hooks
// pass one on (Notify), and the event is a session's start or a prompt, where the agent shows
// it. At other events a message would be lost, so it is not given there.
func (a *Agent) Shows(event string) bool {
	return a != nil && a.Notify == "system_message" && (event == EventSessionStart || event == EventPrompt)
}

// ToolClass says whether tool is one of the agent's edit or shell tools,
// or "" when it is neither.
func (a *Agent) ToolClass(tool string) ToolClass {
	switch {
	case slices.Contains(a.EditTools, tool):
		return ToolsEdit
	case slices.Contains(a.ShellTools, tool):
		return ToolsShell
	}
	return ""
}

// matcher is the agent's tool matcher for a class of tools, "" where its
// hooks take none.
func (a *Agent) matcher(class ToolClass) string {
	var tools []string
	switch class {
	case ToolsEdit:
		tools = a.EditTools
	case ToolsShell:
		tools = a.ShellTools
	}
	switch a.HookFile.Matcher {
	case "names":
		return strings.Join(tools, "|")
	case "regex":
		quoted := make([]string, len(tools))
		for i, t := range tools {
			quoted[i] = regexp.QuoteMeta(t)
		}
		return "^(" + strings.Join(quoted, "|") + ")$"
	}
	return ""
}

// CanonicalEvent maps the agent's own event name to the canonical one.
func (a *Agent) CanonicalEvent(native string) (string, bool) {
	for canon, n := range a.Events {
		if n == native {
			return canon, true
		}
	}
	if _, ok := ActionForEvent(native); ok {
		return native, true
	}
	return "", false
}

// payloadKey is the agent's stdin key for a canonical one.
func (a *Agent) payloadKey(key string) string {
	if k, ok := a.Payload[key]; ok {
		return k
	}
	return key
}

// path resolves a path template of the agent's manifest for the user whose
// home folder is home: ${VAR:-default} is $VAR when set (pi's
// PI_CODING_AGENT_DIR moves ~/.pi/agent), {home} the agent's folder, ~ home.
func (a *Agent) path(tmpl, home string) string {
	return a.manifest.Path(tmpl, home, os.Getenv)
}

// SessionFromEnv tells which agent session a command runs in, from the environment the agent
// gives its shell tool: the REWIND_* exports of SessionStart's env file (or pi's bridge), else
// an agent's own session variable. Both are "" outside any agent.
func SessionFromEnv(getenv func(string) string) (agent, session string) {
	if id := getenv("REWIND_SESSION_ID"); id != "" {
		return getenv("REWIND_AGENT"), id
	}
	for _, name := range AgentNames() {
		for _, v := range profiles()[name].SessionEnv {
			if id := getenv(v); id != "" {
				return name, id
			}
		}
	}
	return "", ""
}
