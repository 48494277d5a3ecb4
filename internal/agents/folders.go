package agents

import (
	"fmt"
	"path/filepath"
	"strings"

	"rewind.dev/internal/layout"
)

// Folders says where an agent keeps its files. Each folder is a path template: a
// slash-separated path whose first element may be
//
//	{home}          the agent's Home (in any template but Home's own)
//	{rewind}        Rewind's own folder ($REWIND_HOME, else ~/.rewind)
//	${VAR:-DEFAULT} $VAR when it is set and not empty, else DEFAULT, which may start with ~
//	~               the user's home folder
//
// so that "${CODEX_HOME:-~/.codex}" says both where Codex keeps its files and which variable
// moves them. The same templates name files in the other sections ("{home}/settings.json").
type Folders struct {
	// Home is the agent's own folder: its settings and most of its state. That it exists says
	// the agent is installed.
	Home string `json:"home"`
	// Sessions are the folders that hold its transcripts: the only ones a transcript path read
	// from data (a hook's payload, a store file) may name.
	Sessions []string `json:"sessions"`
	// TranscriptHints: a transcript path (slash-separated) that contains one of these is
	// likely the agent's.
	TranscriptHints []string `json:"transcript_hints"`
	// State are more folders of the agent's own, besides Home and Sessions, that a snapshot
	// leaves out when the tree holds them (OpenCode's database folder).
	State []string `json:"state,omitempty"`
}

// check refuses a folders block whose templates do not parse, or that names no home.
func (f *Folders) check() error {
	if f.Home == "" {
		return fmt.Errorf("folders name no home")
	}
	if strings.HasPrefix(f.Home, "{home}") {
		return fmt.Errorf("folders: home %q names itself", f.Home)
	}
	for _, t := range append(append([]string{f.Home}, f.Sessions...), f.State...) {
		switch {
		case strings.HasPrefix(t, "${") && !strings.Contains(t, "}"):
			return fmt.Errorf("folders: %q opens ${ and never closes it", t)
		case !startsWithAny(t, "{home}", "{rewind}", "${", "~", "/"):
			return fmt.Errorf("folders: %q starts with neither a known folder nor /", t)
		}
	}
	return nil
}

// Path is what template tmpl of a's manifest names, for the user whose home folder is
// userHome, in the environment getenv: a clean path in the system's form, "" when it lies
// below userHome and userHome is "".
func (a *Agent) Path(tmpl, userHome string, getenv func(string) string) string {
	return expand(tmpl, a.Folders.Home, userHome, getenv)
}

// HomeDir is the agent's Home for userHome in the environment getenv ("" as for Path).
func (a *Agent) HomeDir(userHome string, getenv func(string) string) string {
	return a.Path(a.Folders.Home, userHome, getenv)
}

// SessionDirs are the agent's Sessions for userHome in the environment getenv; one that
// cannot be told (see Path) is left out.
func (a *Agent) SessionDirs(userHome string, getenv func(string) string) []string {
	var out []string
	for _, t := range a.Folders.Sessions {
		if p := a.Path(t, userHome, getenv); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// HomeVar is the environment variable that Home starts with ("CODEX_HOME"), "" when none
// does.
func (a *Agent) HomeVar() string {
	spec, ok := strings.CutPrefix(a.Folders.Home, "${")
	if !ok {
		return ""
	}
	spec, _, _ = strings.Cut(spec, "}")
	name, _, _ := strings.Cut(spec, ":-")
	return name
}

// StateFolders are the folders every agent keeps its own files in — its Home, Sessions and
// State — each as the environment getenv moves it and as it is without its variable (a
// variable set now may not have been set when the files were written), for the user whose
// home folder is userHome. A snapshot never captures, compares, deletes or writes them.
func StateFolders(userHome string, getenv func(string) string) []string {
	unset := func(string) string { return "" }
	seen := map[string]bool{}
	var out []string
	for _, a := range All() {
		for _, t := range append(append([]string{a.Folders.Home}, a.Folders.Sessions...), a.Folders.State...) {
			for _, env := range []func(string) string{unset, getenv} {
				if p := a.Path(t, userHome, env); p != "" && !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// expand expands template tmpl, in which {home} is the template home.
func expand(tmpl, home, userHome string, getenv func(string) string) string {
	var base string
	rest, ok := "", false
	switch {
	case strings.HasPrefix(tmpl, "{home}"):
		rest = tmpl[len("{home}"):]
		base = expand(home, "", userHome, getenv)
		ok = base != ""
	case strings.HasPrefix(tmpl, "{rewind}"):
		rest = tmpl[len("{rewind}"):]
		base = layout.Home(userHome)
		ok = userHome != "" || filepath.IsAbs(base)
	case strings.HasPrefix(tmpl, "${"):
		spec, after, _ := strings.Cut(tmpl[2:], "}")
		name, def, _ := strings.Cut(spec, ":-")
		rest = after
		if base = getenv(name); base == "" {
			base = expand(def, home, userHome, getenv)
		}
		ok = base != ""
	case tmpl == "~" || strings.HasPrefix(tmpl, "~/"):
		rest = tmpl[1:]
		base, ok = userHome, userHome != ""
	default:
		return filepath.Clean(filepath.FromSlash(tmpl))
	}
	if !ok {
		return ""
	}
	return filepath.Clean(base + filepath.FromSlash(rest))
}

func startsWithAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
