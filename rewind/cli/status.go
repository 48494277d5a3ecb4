package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"rewind.dev/hookd"
	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

type statusCmd struct{ common }

func (c *statusCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

// Status is what 'rewind status' reports.
type Status struct {
	Type       string           `json:"type"` // "status"
	Version    string           `json:"version"`
	Binary     string           `json:"binary"`
	Project    string           `json:"project"`
	Store      string           `json:"store,omitempty"`
	Mode       string           `json:"mode,omitempty"`
	Tier       string           `json:"tier"`
	Retention  layout.Retention `json:"retention"`
	Session    *statusSession   `json:"session,omitempty"`
	Count      int              `json:"checkpoints"`
	DiskBytes  int64            `json:"disk_bytes"`
	Last       string           `json:"last_checkpoint,omitempty"`
	LastAt     *time.Time       `json:"last_checkpoint_at,omitempty"`
	LastGC     *time.Time       `json:"last_retention_at,omitempty"`
	LastGCFree int64            `json:"last_retention_freed_bytes,omitempty"`
	LastGCN    int              `json:"last_retention_removed,omitempty"`
	Damage     []string         `json:"damage,omitempty"` // what is known damaged, without reading archives
	Hooks      map[string]bool  `json:"hooks"`
}

// statusSession is the session the hooks recorded (session.json) as status
// --json prints it, with path: its transcript, under the name log gives a
// session's (session.json's own is transcript_path).
type statusSession struct {
	*layout.Session
	Path string `json:"path"`
}

func (c *statusCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "status"); err != nil {
		return err
	}
	project, err := c.projectDir(e)
	if err != nil {
		return err
	}
	exe, _ := os.Executable()
	st := Status{Type: "status", Version: cmdline.VersionString(), Binary: exe, Project: project, Tier: layout.DefaultTier, Retention: layout.DefaultRetention, Hooks: hooksRegistered()}
	tellMove := false
	s, err := store.Open(project)
	if !errors.Is(err, store.ErrNoStore) && err != nil {
		return err // (a store not to be used says why, and how to start clean)
	}
	if err == nil {
		st.Store, st.Mode = s.Dir, string(s.Mode)
		if cfg, err := s.Config(); err == nil {
			st.Tier, st.Retention = cfg.Tier, cfg.Retention
		}
		if sess, err := s.LastSession(); err == nil && sess.SessionID != "" {
			st.Session = &statusSession{Session: &sess, Path: sess.TranscriptPath}
		}
		ids, _ := s.IDs()
		st.Count = len(ids)
		st.DiskBytes = s.DiskUse()
		if len(ids) > 0 {
			st.Last = ids[len(ids)-1]
			if t, ok := store.TimeOfID(st.Last); ok {
				st.LastAt = &t
			}
		}
		if hs := s.HookState(); !hs.LastRetentionAt.IsZero() {
			st.LastGC, st.LastGCFree, st.LastGCN = &hs.LastRetentionAt, hs.LastRetentionFreed, hs.LastRetentionCount
		}
		st.Damage = s.Damage()
		if s.Mode == layout.ModeProject && !c.json && !s.HookState().ToldMove {
			// Once per store: the choice is the person's, and a status they run often
			// should not nag. (Under the lock, briefly: hooks write the same file.)
			lctx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
			if l, err := s.Lock(lctx); err == nil {
				hs := s.HookState()
				hs.ToldMove, tellMove = true, !hs.ToldMove
				s.SetHookState(hs)
				l.Unlock()
			}
			cancel()
		}
	}
	if c.json {
		return e.json(st)
	}
	// Every value that came from data (the store's files, the session the
	// hooks recorded) is shown through cmdline.QuoteText, a path through
	// cmdline.QuotePath.
	tw := e.table()
	fmt.Fprintf(tw, "rewind\t%s (%s)\n", st.Version, cmdline.QuotePath(st.Binary))
	fmt.Fprintf(tw, "Project\t%s\n", cmdline.QuotePath(st.Project))
	if st.Store == "" {
		fmt.Fprintf(tw, "Store\tnone — run 'rewind init'\n")
	} else {
		fmt.Fprintf(tw, "Store\t%s (%s mode)\n", cmdline.QuotePath(st.Store), st.Mode)
		if tellMove {
			fmt.Fprintf(tw, "\tin the project, where git clean -ffdx and rm -rf reach it: 'rewind store move global' keeps it in ~/.rewind (said once)\n")
		}
		fmt.Fprintf(tw, "Checkpoints\t%d, %s on disk\n", st.Count, humanBytes(st.DiskBytes))
		if st.LastAt != nil {
			fmt.Fprintf(tw, "Last checkpoint\t%s (%s)\n", cmdline.QuoteText(st.Last), ago(*st.LastAt))
		}
		if len(st.Damage) == 0 {
			fmt.Fprintf(tw, "Damage\tnone known ('rewind validate' reads everything)\n")
		}
		for _, d := range st.Damage {
			fmt.Fprintf(tw, "Damage\t%s\n", cmdline.QuoteText(d))
		}
	}
	fmt.Fprintf(tw, "Tier\t%s\n", cmdline.QuoteText(st.Tier))
	fmt.Fprintf(tw, "Retention\tkeep %s, at most %s%s\n", cmdline.QuoteText(orNone(st.Retention.MaxAge)), humanBytes(st.Retention.MaxBytes), maxCount(st.Retention.MaxCheckpoints))
	if st.LastGC != nil {
		fmt.Fprintf(tw, "Last retention\t%s: removed %d, freed %s\n", ago(*st.LastGC), st.LastGCN, humanBytes(st.LastGCFree))
	}
	if st.Session != nil {
		fmt.Fprintf(tw, "Session\t%s %s (updated %s)\n", cmdline.QuoteText(st.Session.Agent), cmdline.QuoteText(st.Session.SessionID), ago(st.Session.UpdatedAt))
		fmt.Fprintf(tw, "Transcript\t%s\n", cmdline.QuotePath(st.Session.TranscriptPath))
	}
	var hooks []string
	for agent, ok := range st.Hooks {
		if ok {
			hooks = append(hooks, agent)
		}
	}
	slices.Sort(hooks) // a map's order changes from run to run
	if len(hooks) == 0 {
		fmt.Fprintf(tw, "Hooks\tnone registered — 'rewind config --register-hooks'\n")
	} else {
		fmt.Fprintf(tw, "Hooks\tregistered for %s\n", strings.Join(hooks, ", "))
	}
	return tw.Flush()
}

func maxCount(n int) string {
	if n == 0 {
		return ""
	}
	return ", " + count(n, "checkpoint")
}

// hooksRegistered tells, per agent, whether the settings file that agent
// reads holds Rewind's hook entries.
func hooksRegistered() map[string]bool {
	home, _ := os.UserHomeDir()
	out := map[string]bool{}
	for _, agent := range hookd.AgentNames() {
		p, err := hookd.SettingsPath(home, agent)
		if err != nil {
			out[agent] = false
			continue
		}
		entries, err := hookd.Registered(p, agent)
		out[agent] = err == nil && len(entries) > 0
	}
	return out
}

func (c *statusCmd) doc() doc {
	return doc{
		summary:  "installation, store, session and hooks",
		examples: []string{"rewind status", "rewind -C ~/proj status --json"},
	}
}
