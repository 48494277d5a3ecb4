package hookd

import (
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

//go:embed agents/*.json
var agentFS embed.FS

// Agent is one agent's hook profile: how its hooks name the project, where
// the env file comes from, its tool names and where its settings live.
type Agent struct {
	Version     int    `json:"version"`
	Name        string `json:"name"`         // "claude", "droid"
	DisplayName string `json:"display_name"` // "Claude Code"
	Executable  string `json:"executable"`   // the agent's command, to tell whether it is installed
	ConfigDir   string `json:"config_dir"`   // "~/.claude"; its existence also says the agent is installed

	// Settings are the files the agent reads hooks from, in order of
	// preference: the first that exists (or, when none does, the last one
	// without OnlyIfExists) is the one to register in.
	Settings []SettingsFile `json:"settings"`

	ProjectDirEnv      []string `json:"project_dir_env"`     // env vars naming the project, first set wins
	DetectEnv          []string `json:"detect_env"`          // env vars only this agent sets
	TranscriptContains string   `json:"transcript_contains"` // a transcript_path of this agent contains it
	EnvFileEnv         string   `json:"env_file_env"`        // env var naming the SessionStart env file
	EnvFileStdinKey    string   `json:"env_file_stdin_key"`  // stdin key naming it (Droid); wins over EnvFileEnv

	EditTools  []string `json:"edit_tools"`  // tools that write files
	ShellTools []string `json:"shell_tools"` // tools that run commands
	FileKeys   []string `json:"file_keys"`   // tool_input keys that name the file a tool touches
}

// SettingsFile is one file an agent reads hooks from.
type SettingsFile struct {
	Path         string `json:"path"`           // "~/..." is relative to the home directory
	HooksKey     string `json:"hooks_key"`      // the top-level key holding the events; "" = the events are the top level
	OnlyIfExists bool   `json:"only_if_exists"` // the agent reads it only when it exists
}

// agents parses the embedded profiles on first use, not at start-up: every
// rewind process links this package, and most never look at an agent.
var agents = sync.OnceValue(func() map[string]*Agent {
	m := map[string]*Agent{}
	entries, err := agentFS.ReadDir("agents")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := agentFS.ReadFile(path.Join("agents", e.Name()))
		if err != nil {
			panic(err)
		}
		a := new(Agent)
		if err := json.Unmarshal(b, a); err != nil {
			panic(fmt.Sprintf("hookd: agents/%s: %v", e.Name(), err))
		}
		m[a.Name] = a
	}
	return m
})

// AgentNames lists the agents Rewind has hook profiles for, sorted.
func AgentNames() []string {
	names := make([]string, 0, len(agents()))
	for n := range agents() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupAgent returns the profile of the named agent.
func LookupAgent(name string) (*Agent, error) {
	if a, ok := agents()[name]; ok {
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
	return expandHome(home, f.Path), nil
}

func (a *Agent) settingsFile(home string) SettingsFile {
	var fallback SettingsFile
	for _, f := range a.Settings {
		if _, err := os.Stat(expandHome(home, f.Path)); err == nil {
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

// Installed reports whether the agent looks installed for home: its config
// folder exists or its executable is on PATH.
func (a *Agent) Installed(home string, lookPath func(string) (string, error)) bool {
	if st, err := os.Stat(expandHome(home, a.ConfigDir)); err == nil && st.IsDir() {
		return true
	}
	if lookPath != nil {
		if _, err := lookPath(a.Executable); err == nil {
			return true
		}
	}
	return false
}

// toolClass says whether tool is one of the agent's "edit" or "shell"
// tools, or "" when it is neither.
func (a *Agent) toolClass(tool string) string {
	switch {
	case slices.Contains(a.EditTools, tool):
		return "edit"
	case slices.Contains(a.ShellTools, tool):
		return "shell"
	}
	return ""
}

func expandHome(home, p string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}
