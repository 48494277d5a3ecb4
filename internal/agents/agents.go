// Package agents holds what Rewind knows about each agent it supports, one manifest per agent:
// <name>.json in this folder, embedded. A manifest owns the agent's name, the name people know
// it by, its executable, and two sections that the packages using them read in their own
// types: "dialect" (how its transcripts read, package jsonl) and "hooks" (where and how its
// hooks are registered, package hookd).
//
// Folders, the agent's own part, say where it keeps its files: its home, with the variable that
// moves it; its session folders; the folders a snapshot leaves out.
//
// The manifests sit here, in the internal module that every other module imports, because
// snap, jsonl and hookd each need a part of an agent and may import no sibling: with one file
// per agent in the lowest module, an agent's facts are written once, and adding an agent is
// adding its manifest, its fixtures (internal/fixtures/<name>/) and its end-to-end test, with
// code only where its mechanics differ. The sections stay opaque here so that the formats stay
// with the code that reads them.
package agents

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

//go:embed *.json
var manifestFiles embed.FS

// Unnamed is the agent of the records that name none: those Rewind wrote before records
// named their agent, when it knew only Claude Code.
const Unnamed = "claude"

// Version is the manifest format's version.
const Version = 1

// Agent is one agent's manifest. Treat it as read-only.
type Agent struct {
	Version int `json:"version"`
	// Name is the agent's name in flags, records and file names: "claude", "droid", ….
	Name string `json:"name"`
	// DisplayName is the name people know the agent by: "Claude Code".
	DisplayName string `json:"display_name"`
	// Executable is the agent's command, to tell whether it is installed and to run it.
	Executable string `json:"executable"`
	// Folders are where the agent keeps its files.
	Folders Folders `json:"folders"`
	// Dialect is the transcript dialect (package jsonl reads it), nil when Rewind reads no
	// transcript of the agent.
	Dialect json.RawMessage `json:"dialect,omitempty"`
	// Hooks is the hook profile (package hookd reads it), nil when Rewind registers no hooks
	// with the agent.
	Hooks json.RawMessage `json:"hooks,omitempty"`
}

// parse reads a manifest and checks what this package owns.
func parse(data []byte) (*Agent, error) {
	a := new(Agent)
	if err := json.Unmarshal(data, a); err != nil {
		return nil, err
	}
	switch {
	case a.Version != Version:
		return nil, fmt.Errorf("manifest version %d, want %d", a.Version, Version)
	case a.Name == "" || a.Name != strings.ToLower(a.Name) || strings.ContainsAny(a.Name, ", /\\"):
		return nil, fmt.Errorf("manifest name %q is not a lower-case word", a.Name)
	case a.DisplayName == "" || a.Executable == "":
		return nil, fmt.Errorf("manifest %s names no display name or executable", a.Name)
	}
	if err := a.Folders.check(); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", a.Name, err)
	}
	return a, nil
}

// all parses the embedded manifests on first use: every process links this package, and most
// never look at an agent.
var all = sync.OnceValues(func() ([]*Agent, error) {
	entries, err := manifestFiles.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var out []*Agent
	for _, e := range entries {
		data, err := manifestFiles.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		a, err := parse(data)
		if err != nil {
			return nil, fmt.Errorf("agents/%s: %w", e.Name(), err)
		}
		if want := a.Name + ".json"; e.Name() != want {
			return nil, fmt.Errorf("agents/%s: the manifest of %s must be named %s", e.Name(), a.Name, want)
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
})

// All returns every agent's manifest, sorted by name. A manifest that does not parse is a
// defect of the build, caught by this package's tests: All panics on it.
func All() []*Agent {
	as, err := all()
	if err != nil {
		panic(err)
	}
	return as
}

// Lookup returns the manifest of the agent with this name.
func Lookup(name string) (*Agent, bool) {
	for _, a := range All() {
		if a.Name == name {
			return a, true
		}
	}
	return nil, false
}
