package store

import (
	"path/filepath"
	"slices"
	"strings"

	"rewind.dev/fork"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
)

// Gone reports whether the fork's file is nowhere: neither at its path nor
// where an undo-restore moved it aside (from where redo brings it back).
func (f ForkState) Gone() bool {
	if f.Removed != "" {
		return !exists(f.Removed)
	}
	return !exists(f.Path)
}

// ForgottenTitles is what ForgetGoneForkTitles took out of one agent's index
// of session names.
type ForgottenTitles struct {
	Type    string `json:"type"` // "forgotten_titles"
	Agent   string `json:"agent"`
	Index   string `json:"index"`
	Removed int    `json:"removed"`
}

// ForgetGoneForkTitles takes out of the agents' indexes of session names
// (Codex's session_index.jsonl, where a fork's title is a line of its own;
// the other agents keep it in the fork) the title lines Rewind wrote for
// forks that are gone, so that an uninstall leaves no name of a session
// that is not there. The forks are those the restore history of every store
// this user's Rewind made records (the registry, whose stores' ids must
// match); a line goes only when both its session id and its title are what
// Rewind wrote (fork.ForgetTitles), and only from the index of a fork whose
// recorded path lies in its agent's session folders. It returns one entry
// per index it took lines out of. It reads the registry of the homes the
// environment names (EnvHomes).
func ForgetGoneForkTitles() ([]ForgottenTitles, error) { return EnvHomes().ForgetGoneForkTitles() }

// ForgetGoneForkTitles is the package's ForgetGoneForkTitles for the stores
// the registry in the homes h records.
func (h Homes) ForgetGoneForkTitles() ([]ForgottenTitles, error) {
	type key struct{ agent, index string }
	titles := map[key]map[string]string{}
	var order []key
	for _, dir := range h.registeredStores() {
		hist, err := (&Store{Dir: dir, Homes: h}).History()
		if err != nil {
			continue // (a store the user removed, or damaged: validate says why)
		}
		for _, f := range hist.Forks() {
			if f.Agent == "" || f.SessionID == "" || f.Title == "" || !f.Gone() || jsonl.CheckTranscriptPath(f.Agent, f.Path) != nil {
				continue
			}
			d, err := jsonl.LookupDialect(f.Agent)
			if err != nil {
				continue
			}
			index, err := fork.IndexPath(d, f.Path)
			if err != nil || index == "" {
				continue
			}
			k := key{f.Agent, index}
			if titles[k] == nil {
				titles[k] = map[string]string{}
				order = append(order, k)
			}
			titles[k][f.SessionID] = f.Title
		}
	}
	var out []ForgottenTitles
	for _, k := range order {
		d, _ := jsonl.LookupDialect(k.agent)
		n, err := fork.ForgetTitles(d, k.index, titles[k])
		if err != nil {
			return out, err
		}
		if n > 0 {
			out = append(out, ForgottenTitles{Type: "forgotten_titles", Agent: k.agent, Index: k.index, Removed: n})
		}
	}
	return out, nil
}

// registeredStores are the folders of the stores this user's Rewind made,
// as the registry records them, each holding the id the registry names it
// by; sorted.
func (h Homes) registeredStores() []string {
	reg := layout.Registry(h.Rewind)
	names, _ := filepath.Glob(filepath.Join(reg, "*.json"))
	var dirs []string
	for _, name := range names {
		r, err := readStoreRecord(name)
		if err != nil || r.Path == "" || strings.TrimSuffix(filepath.Base(name), ".json") != r.ID {
			continue
		}
		if own, err := readStoreRecord(filepath.Join(r.Path, layout.StoreFile)); err != nil || own.ID != r.ID {
			continue
		}
		dirs = append(dirs, r.Path)
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}
