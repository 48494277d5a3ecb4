package hookd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"rewind.dev/internal/layout"
)

// DetectAgent tells which agent sent in, from the strongest signal to the
// weakest: a payload key only one agent sends (Droid's env-file key), the transcript's
// location, environment variables only one agent sets, a tool name only one
// agent has. Droid sets CLAUDE_PROJECT_DIR too (for Claude-style hooks), so
// that variable alone proves nothing. Registered hooks pass --agent, which
// makes this a fallback for hand-written registrations.
func DetectAgent(in *Input, getenv func(string) string) (*Agent, error) {
	signals := []func(a *Agent) bool{
		func(a *Agent) bool {
			for _, k := range a.DetectStdinKeys {
				if in.Has(k) {
					return true
				}
			}
			return false
		},
		func(a *Agent) bool {
			p := filepath.ToSlash(in.TranscriptPath)
			for _, hint := range a.manifest.Folders.TranscriptHints {
				if p != "" && hint != "" && strings.Contains(p, hint) {
					return true
				}
			}
			return false
		},
		func(a *Agent) bool {
			for _, v := range a.DetectEnv {
				if getenv(v) != "" {
					return true
				}
			}
			return false
		},
		func(a *Agent) bool { return in.ToolName != "" && a.ToolClass(in.ToolName) != "" },
	}
	for _, sig := range signals {
		var found []*Agent
		for _, name := range AgentNames() {
			if a := profiles()[name]; sig(a) {
				found = append(found, a)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
	}
	return nil, fmt.Errorf("cannot tell which agent sent this hook (session %q)", in.SessionID)
}

// Decide turns one agent event into the request for `rewind hook`: which
// project, which session, and whether (and how eagerly) to checkpoint under
// the tier. The deadline is the caller's.
func Decide(in *Input, a *Agent, t *Tier, event string, getenv func(string) string) (Request, error) {
	req := Request{
		Version:        RequestVersion,
		Event:          event,
		Agent:          a.Name,
		Cwd:            in.Cwd,
		SessionID:      in.SessionID,
		TranscriptPath: in.TranscriptPath,
		EnvFile:        envFilePath(in, a, getenv),
		Tool:           in.ToolName,
		Prompt:         truncateRunes(in.Prompt, 200),
		Checkpoint:     t.Checkpoint(a, event, in.ToolName),
	}
	if !layout.ValidSessionID(req.SessionID) {
		// Not an agent's session id: one that could name a path ("../..") is dropped, and
		// so is what would be derived from it.
		req.SessionID = ""
	}
	if req.TranscriptPath == "" && a.TranscriptPath != "" && req.SessionID != "" {
		// The agent names no transcript (Copilot before agentStop): its
		// place follows from the session id; it may appear later.
		if home, err := userHome(getenv); err == nil {
			req.TranscriptPath = a.path(strings.ReplaceAll(a.TranscriptPath, "{session_id}", req.SessionID), home)
		}
	}
	var err error
	if req.ProjectDir, err = ProjectDir(in, a, getenv); err != nil {
		return req, err
	}
	if in.ToolName != "" {
		req.File = in.File(a)
	}
	if req.Checkpoint == CheckpointThrottled {
		req.MinIntervalMS = t.MinIntervalMS
		req.MinChangedFiles = t.MinChangedFiles
	}
	if event == EventSessionStart {
		req.Retention = true
		req.RetentionBudgetMS = t.RetentionBudgetMS
	}
	return req, nil
}

// ProjectDir is the project an event belongs to: the agent's project-dir
// variable (the launch root; cwd may be a subfolder), else the input's cwd,
// or the folder above it that has the store (see StoreRoot).
func ProjectDir(in *Input, a *Agent, getenv func(string) string) (string, error) {
	dir := ""
	for _, v := range a.ProjectDirEnv {
		if dir = getenv(v); dir != "" {
			break
		}
	}
	if dir == "" {
		dir = in.Cwd
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return "", fmt.Errorf("no absolute project directory: %s and the input's cwd are empty or relative (%q)",
			strings.Join(a.ProjectDirEnv, ", "), dir)
	}
	return StoreRoot(filepath.Clean(dir)), nil
}

// envFilePath is where the agent wants SessionStart's exports: Droid names
// the file on stdin, Claude Code in the environment.
func envFilePath(in *Input, a *Agent, getenv func(string) string) string {
	if a.EnvFileStdinKey != "" {
		if f := in.String(a.EnvFileStdinKey); f != "" {
			return f
		}
	}
	if a.EnvFileEnv != "" {
		return getenv(a.EnvFileEnv)
	}
	return ""
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// userHome is $HOME as the agent's environment has it.
func userHome(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	return os.UserHomeDir()
}
