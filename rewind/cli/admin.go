package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"rewind.dev/hookd"
	"rewind.dev/rewind/store"
)

type statusCmd struct{ common }

func (c *statusCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

// Status is what 'rewind status' reports.
type Status struct {
	Type       string          `json:"type"` // "status"
	Version    string          `json:"version"`
	Binary     string          `json:"binary"`
	Project    string          `json:"project"`
	Store      string          `json:"store,omitempty"`
	Mode       string          `json:"mode,omitempty"`
	Tier       string          `json:"tier"`
	Retention  store.Retention `json:"retention"`
	Session    *store.Session  `json:"session,omitempty"`
	Count      int             `json:"checkpoints"`
	DiskBytes  int64           `json:"disk_bytes"`
	Last       string          `json:"last_checkpoint,omitempty"`
	LastAt     *time.Time      `json:"last_checkpoint_at,omitempty"`
	LastGC     *time.Time      `json:"last_retention_at,omitempty"`
	LastGCFree int64           `json:"last_retention_freed_bytes,omitempty"`
	LastGCN    int             `json:"last_retention_removed,omitempty"`
	Damage     []string        `json:"damage,omitempty"` // what is known damaged, without reading archives
	Hooks      map[string]bool `json:"hooks"`
}

func (c *statusCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "status"); err != nil {
		return err
	}
	project, err := c.projectDir()
	if err != nil {
		return err
	}
	exe, _ := os.Executable()
	st := Status{Type: "status", Version: versionString(), Binary: exe, Project: project, Tier: store.DefaultTier, Retention: store.DefaultRetention, Hooks: hooksRegistered()}
	s, err := store.Open(project)
	if err == nil {
		st.Store, st.Mode = s.Dir, string(s.Mode)
		if cfg, err := s.Config(); err == nil {
			st.Tier, st.Retention = cfg.Tier, cfg.Retention
		}
		if sess, err := s.Session(); err == nil && sess.SessionID != "" {
			st.Session = &sess
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
	}
	if c.json {
		return e.json(st)
	}
	tw := e.table()
	fmt.Fprintf(tw, "rewind\t%s (%s)\n", st.Version, st.Binary)
	fmt.Fprintf(tw, "Project\t%s\n", st.Project)
	if st.Store == "" {
		fmt.Fprintf(tw, "Store\tnone — run 'rewind init'\n")
	} else {
		fmt.Fprintf(tw, "Store\t%s (%s mode)\n", st.Store, st.Mode)
		fmt.Fprintf(tw, "Checkpoints\t%d, %s on disk\n", st.Count, humanBytes(st.DiskBytes))
		if st.LastAt != nil {
			fmt.Fprintf(tw, "Last checkpoint\t%s (%s)\n", st.Last, ago(*st.LastAt))
		}
		if len(st.Damage) == 0 {
			fmt.Fprintf(tw, "Damage\tnone known ('rewind validate' reads everything)\n")
		}
		for _, d := range st.Damage {
			fmt.Fprintf(tw, "Damage\t%s\n", d)
		}
	}
	fmt.Fprintf(tw, "Tier\t%s\n", st.Tier)
	fmt.Fprintf(tw, "Retention\tkeep %s, at most %s%s\n", orNone(st.Retention.MaxAge), humanBytes(st.Retention.MaxBytes), maxCount(st.Retention.MaxCheckpoints))
	if st.LastGC != nil {
		fmt.Fprintf(tw, "Last retention\t%s: removed %d, freed %s\n", ago(*st.LastGC), st.LastGCN, humanBytes(st.LastGCFree))
	}
	if st.Session != nil {
		fmt.Fprintf(tw, "Session\t%s %s (updated %s)\n", st.Session.Agent, st.Session.SessionID, ago(st.Session.UpdatedAt))
		fmt.Fprintf(tw, "Transcript\t%s\n", st.Session.TranscriptPath)
	}
	var hooks []string
	for agent, ok := range st.Hooks {
		if ok {
			hooks = append(hooks, agent)
		}
	}
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
	return fmt.Sprintf(", %d checkpoints", n)
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

type validateCmd struct{ common }

func (c *validateCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *validateCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "validate"); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	stop := e.progress("checking every checkpoint")
	probs, n, err := s.Validate(ctx)
	stop()
	if err != nil {
		return err
	}
	if c.json {
		for _, p := range probs {
			e.json(p)
		}
		e.json(map[string]any{"type": "validate", "checkpoints": n, "problems": len(probs)})
	} else {
		for _, p := range probs {
			fmt.Fprintf(e.stdout, "problem: %s: %s\n", p.What, p.Issue)
		}
		fmt.Fprintf(e.stdout, "%d checkpoint%s checked, %d problem%s\n", n, plural(n), len(probs), plural(len(probs)))
	}
	if len(probs) > 0 {
		return withHint(fmt.Errorf("the store has %d problem%s", len(probs), plural(len(probs))), "a damaged checkpoint can be deleted with 'rewind gc' or by removing its folder")
	}
	return nil
}

type gcCmd struct {
	common
	keep, maxAge, maxBytes string
	dryRun                 bool
}

func (c *gcCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.StringVar(&c.keep, "keep", "", "keep the newest `N` checkpoints (N ≥ 1), delete older ones")
	fs.StringVar(&c.maxAge, "max-age", "", "delete checkpoints older than `D` (e.g. 30d, 12h)")
	fs.StringVar(&c.maxBytes, "max-bytes", "", "delete the oldest until the store uses at most `SIZE` (e.g. 500M, 2G)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "change nothing; list what would be deleted")
}

// policy validates the flags into a policy: each one given must mean
// something (keep at least one, sizes and ages above zero).
func (c *gcCmd) policy() (store.GCOptions, error) {
	o := store.GCOptions{DryRun: c.dryRun}
	if c.keep != "" {
		n, err := strconv.Atoi(c.keep)
		if err != nil || n < 1 {
			return o, usageError{fmt.Sprintf("--keep takes a number of checkpoints of at least 1 (the newest is always kept), got %q", c.keep)}
		}
		o.Keep = n
	}
	if c.maxAge != "" {
		d, err := store.ParseAge(c.maxAge)
		if err != nil || d <= 0 {
			return o, usageError{fmt.Sprintf("--max-age takes an age above zero, e.g. 30d, 12h or 90m, got %q", c.maxAge)}
		}
		o.MaxAge = d
	}
	if c.maxBytes != "" {
		n, err := store.ParseSize(c.maxBytes)
		if err != nil || n <= 0 {
			return o, usageError{fmt.Sprintf("--max-bytes takes a size above zero, e.g. 500M, 2G or a number of bytes, got %q", c.maxBytes)}
		}
		o.MaxBytes = n
	}
	return o, nil
}

func (c *gcCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "gc"); err != nil {
		return err
	}
	opts, err := c.policy()
	if err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	if opts.Keep == 0 && opts.MaxAge == 0 && opts.MaxBytes == 0 {
		cfg, err := s.Config()
		if err != nil {
			return err
		}
		opts.Keep, opts.MaxBytes = cfg.Retention.MaxCheckpoints, cfg.Retention.MaxBytes
		if opts.MaxAge, err = store.ParseAge(cfg.Retention.MaxAge); err != nil {
			return err
		}
	}
	res, err := s.GC(ctx, opts)
	if err != nil {
		return err
	}
	if c.json {
		return e.json(res)
	}
	verb := "Deleted"
	if res.DryRun {
		verb = "Would delete"
	}
	fmt.Fprintf(e.stdout, "%s %d checkpoints, freeing %s; %d kept\n", verb, len(res.Removed), humanBytes(res.FreedBytes), res.Kept)
	for _, id := range res.Removed {
		fmt.Fprintf(e.stdout, "  %s\n", id)
	}
	if len(res.Protected) > 0 {
		fmt.Fprintf(e.stdout, "Kept %d that the policy would delete: pinned, needed by undo-restore, or perhaps by a damaged checkpoint (%s)\n", len(res.Protected), strings.Join(res.Protected, ", "))
	}
	if len(res.Damaged) > 0 {
		fmt.Fprintf(e.stderr, "%s: warning: gc could not read checkpoint%s %s, so it deleted nothing older, nor any archive %s might read; 'rewind validate' says what is damaged\n",
			name, plural(len(res.Damaged)), strings.Join(res.Damaged, ", "), pronoun(len(res.Damaged)))
	}
	return nil
}

type pinCmd struct {
	common
	unpin bool
}

func (c *pinCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *pinCmd) Exec(ctx context.Context, e *env, args []string) error {
	sub, hi := "pin", 2
	if c.unpin {
		sub, hi = "unpin", 1
	}
	if err := needArgs(args, 1, hi, sub); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	cp, err := s.Resolve(args[0])
	if err != nil {
		return err
	}
	label := ""
	if !c.unpin {
		label = "pinned"
		if len(args) == 2 {
			label = args[1]
		}
	}
	if err := s.Pin(ctx, cp, label); err != nil {
		return err
	}
	if c.json {
		return e.json(map[string]any{"type": sub, "checkpoint": cp.ID, "label": label})
	}
	if c.unpin {
		fmt.Fprintf(e.stdout, "Unpinned %s\n", cp.ID)
	} else {
		fmt.Fprintf(e.stdout, "Pinned %s as %q; gc keeps it\n", cp.ID, label)
	}
	return nil
}

type configCmd struct {
	common
	tier                 string
	registerHooks, unreg bool
	agents               string
}

func (c *configCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.StringVar(&c.tier, "tier", "", "set the project's tier: minimal, balanced or aggressive")
	fs.BoolVar(&c.registerHooks, "register-hooks", false, "register Rewind's hooks in the agents' settings")
	fs.BoolVar(&c.unreg, "unregister-hooks", false, "remove Rewind's hooks from the agents' settings")
	fs.StringVar(&c.agents, "agent", "all", "which agents' settings: claude, droid or all")
}

func (c *configCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "config"); err != nil {
		return err
	}
	if c.registerHooks && c.unreg {
		return usageError{"--register-hooks and --unregister-hooks exclude each other"}
	}
	if c.registerHooks || c.unreg {
		return c.hooks(ctx, e)
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	if c.tier != "" {
		switch c.tier {
		case "minimal", "balanced", "aggressive":
		default:
			return usageError{fmt.Sprintf("unknown tier %q: minimal, balanced or aggressive", c.tier)}
		}
		l, err := s.Lock(ctx)
		if err != nil {
			return err
		}
		pc, err := s.ProjectConfig()
		if err == nil {
			pc.Tier = c.tier
			err = s.SetProjectConfig(pc)
		}
		l.Unlock()
		if err != nil {
			return err
		}
	}
	cfg, err := s.Config()
	if err != nil {
		return err
	}
	if c.json {
		return e.json(map[string]any{"type": "config", "config": cfg, "global": store.GlobalConfigPath(), "project": s.ProjectConfigPath()})
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	fmt.Fprintf(e.stdout, "%s\n(global %s, project %s)\n", b, store.GlobalConfigPath(), s.ProjectConfigPath())
	return nil
}

// hooks registers or unregisters through rewind-hook, installed beside
// this binary, which owns the agents' settings files.
func (c *configCmd) hooks(ctx context.Context, e *env) error {
	hook := filepath.Join(executableDir(), "rewind-hook")
	if _, err := os.Stat(hook); err != nil {
		return withHint(fmt.Errorf("rewind-hook is not installed beside rewind (%s)", hook), "run ./install.sh from the Rewind source")
	}
	args := []string{"register", "--agents", c.agents}
	if c.unreg {
		args = []string{"unregister", "--agents", c.agents}
	}
	if c.tier != "" && c.registerHooks {
		args = append(args, "--tier", c.tier)
	}
	cmd := exec.CommandContext(ctx, hook, args...)
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", hook, strings.Join(args, " "), err)
	}
	return nil
}

type forksCmd struct{ common }

func (c *forksCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *forksCmd) Exec(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "show") || (args[0] == "show") != (len(args) == 2) || len(args) > 2 {
		return usageError{"use 'rewind forks list' or 'rewind forks show <session-id>'"}
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	h, err := s.History()
	if err != nil {
		return err
	}
	var found bool
	tw := e.table()
	if args[0] == "list" && !c.json {
		fmt.Fprintln(tw, e.color("1", "SESSION\tWHEN\tFROM\tAT BYTE\tTITLE\tSTATE"))
	}
	for i := len(h.Entries) - 1; i >= 0; i-- {
		en := h.Entries[i]
		f := en.Fork
		if f == nil || (args[0] == "show" && !strings.HasPrefix(f.SessionID, args[1])) {
			continue
		}
		found = true
		state := "present"
		if f.Removed != "" {
			state = "moved to " + f.Removed
		} else if _, err := os.Stat(f.Path); errors.Is(err, os.ErrNotExist) {
			state = "gone"
		}
		if c.json {
			e.json(map[string]any{"type": "fork", "fork": f, "restore": en.ID, "at": en.At, "state": state})
			continue
		}
		if args[0] == "list" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", f.SessionID, ago(en.At), filepath.Base(f.ParentTranscript), f.Offset, oneLine(f.Title, 40), state)
			continue
		}
		fmt.Fprintf(tw, "Session\t%s\nFile\t%s\nForked\t%s by %s (%s)\nFrom\t%s\nAt byte\t%d\nTitle\t%s\nState\t%s\nOpen\t%s\n",
			f.SessionID, f.Path, ago(en.At), en.Kind, en.ID, f.ParentTranscript, f.Offset, orNone(f.Title), state, store.ResumeHint(f.Agent, f.SessionID))
		break
	}
	if args[0] == "show" && !found {
		return fmt.Errorf("no fork with session id %q; 'rewind forks list' shows them", args[1])
	}
	if !c.json {
		return tw.Flush()
	}
	return nil
}

type statuslineCmd struct{}

func (c *statuslineCmd) RegisterFlags(fs *flag.FlagSet) {}

// Exec prints one line for a status bar and never fails loudly: the status
// bar is not the place for errors.
func (c *statuslineCmd) Exec(ctx context.Context, e *env, args []string) error {
	var in struct {
		SessionID      string `json:"session_id"`
		TranscriptPath string `json:"transcript_path"`
		Cwd            string `json:"cwd"`
		Workspace      struct {
			CurrentDir string `json:"current_dir"`
			ProjectDir string `json:"project_dir"`
		} `json:"workspace"`
	}
	b, _ := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
	json.Unmarshal(b, &in)
	dir := in.Workspace.ProjectDir
	for _, d := range []string{in.Workspace.CurrentDir, in.Cwd, os.Getenv("REWIND_PROJECT_DIR"), "."} {
		if dir == "" {
			dir = d
		}
	}
	project, err := store.FindProject(dir)
	if err != nil {
		return nil
	}
	s, err := store.Open(project)
	if err != nil {
		fmt.Fprintln(e.stdout, "◇ rewind: no store (rewind init)")
		return nil
	}
	ids, _ := s.IDs()
	if len(ids) == 0 {
		fmt.Fprintln(e.stdout, "◇ 0 checkpoints")
		return nil
	}
	mark := "◆"
	line := fmt.Sprintf("%d checkpoint%s", len(ids), plural(len(ids)))
	if t, ok := store.TimeOfID(ids[len(ids)-1]); ok {
		line += " · last " + ago(t)
	}
	if in.SessionID != "" && !sessionCaptured(s, ids, in.SessionID, in.TranscriptPath) {
		mark, line = "◇", line+" · none this session"
	}
	fmt.Fprintln(e.stdout, mark+" "+line)
	return nil
}

// statuslineLookback is how many of the newest checkpoints the status line
// reads looking for the session's own: a session that has any has one among
// the newest unless other sessions of the project took this many since, and
// reading them all would cost the status bar tens of milliseconds.
const statuslineLookback = 32

// sessionCaptured reports whether one of the newest checkpoints holds the
// transcript of session id, known by its id (hooks record it) or its path
// (`rewind save --transcript` may not know the id).
func sessionCaptured(s *store.Store, ids []string, id, path string) bool {
	for i := len(ids) - 1; i >= 0 && i >= len(ids)-statuslineLookback; i-- {
		cp, err := s.Load(ids[i])
		if err != nil || cp.Transcript == nil {
			continue
		}
		if cp.Transcript.SessionID == id || (path != "" && cp.Transcript.OriginalPath == path) {
			return true
		}
	}
	return false
}

type hookCmd struct{ common }

func (c *hookCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

// Exec applies one hookd.Request from stdin and prints a hookd.Response.
func (c *hookCmd) Exec(ctx context.Context, e *env, args []string) error {
	var req hookd.Request
	dec := json.NewDecoder(io.LimitReader(e.stdin, 1<<20))
	if err := dec.Decode(&req); err != nil {
		return usageError{fmt.Sprintf("hook request on stdin: %v", err)}
	}
	if req.Version > hookd.RequestVersion {
		return fmt.Errorf("hook request version %d is newer than this rewind (%d); reinstall Rewind", req.Version, hookd.RequestVersion)
	}
	if req.ProjectDir == "" {
		return usageError{"hook request has no project_dir"}
	}
	s, err := store.Open(req.ProjectDir)
	if errors.Is(err, store.ErrNoStore) {
		return e.json(hookd.Response{Type: "hook", Action: "skip", Reason: "no-store"})
	}
	if err != nil {
		return err
	}
	resp, err := s.Hook(ctx, req)
	if err != nil {
		return err
	}
	return e.json(resp)
}
