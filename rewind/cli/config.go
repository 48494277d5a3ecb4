package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"rewind.dev/hookd"
	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
	"rewind.dev/snap"
)

type configCmd struct {
	common
	tier                 string
	registerHooks, unreg bool
	agents               string
}

func (c *configCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	cmdline.ChoiceVar(fs, &c.tier, "tier", "", hookd.TierNames(), "set the project's `TIER`: minimal, balanced or aggressive")
	fs.BoolVar(&c.registerHooks, "register-hooks", false, "register Rewind's hooks in the agents' settings")
	fs.BoolVar(&c.unreg, "unregister-hooks", false, "remove Rewind's hooks from the agents' settings")
	cmdline.ChoiceListVar(fs, &c.agents, "agent", "all", append(hookd.AgentNames(), "all"), "the `AGENTS` whose hooks to change: a comma-separated list of "+strings.Join(hookd.AgentNames(), ", ")+", or all")
}

func (c *configCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "config"); err != nil {
		return err
	}
	if c.registerHooks && c.unreg {
		return cmdline.Usagef("--register-hooks and --unregister-hooks exclude each other")
	}
	if c.registerHooks || c.unreg {
		return c.hooks(ctx, e)
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	if c.tier != "" {
		if !slices.Contains(hookd.TierNames(), c.tier) {
			return cmdline.Usagef("unknown tier %q: %s", c.tier, strings.Join(hookd.TierNames(), ", "))
		}
		l, err := s.Lock(ctx)
		if err != nil {
			return err
		}
		err = s.SetTier(c.tier)
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
	tier := cfg.Tier
	if pc, err := s.ProjectConfig(); err == nil && pc.Tier != "" {
		tier += " (set for this project)"
	}
	r := cfg.Retention
	ignore := strings.Join(cfg.Ignore, ", ")
	// The config files are data: their values are shown through
	// cmdline.QuoteText, their paths through cmdline.QuotePath.
	tw := e.table()
	fmt.Fprintf(tw, "Tier\t%s\n", cmdline.QuoteText(tier))
	fmt.Fprintf(tw, "Retention\tkeep %s, at most %s%s\n", cmdline.QuoteText(orNone(r.MaxAge)), humanBytes(r.MaxBytes), maxCount(r.MaxCheckpoints))
	fmt.Fprintf(tw, "Ignore\t%s\n", cmdline.QuoteText(orNone(ignore)))
	lim, note := s.Limits().Or(snap.DefaultLimits), ""
	if len(cfg.Limits) == 0 {
		note = " (the defaults)"
	}
	fmt.Fprintf(tw, "Limits\t%d entries, %s of content, %d path elements, %d-byte paths%s\n", lim.MaxEntries, humanBytes(lim.MaxBytes), lim.MaxDepth, lim.MaxPath, note)
	fmt.Fprintf(tw, "Global file\t%s%s\n", cmdline.QuotePath(store.GlobalConfigPath()), absentNote(store.GlobalConfigPath()))
	fmt.Fprintf(tw, "Project file\t%s%s\n", cmdline.QuotePath(s.ProjectConfigPath()), absentNote(s.ProjectConfigPath()))
	return tw.Flush()
}

// hooks registers or unregisters through rewind-hook, installed beside
// this binary, which owns the agents' settings files.
func (c *configCmd) hooks(ctx context.Context, e *env) error {
	hook := filepath.Join(executableDir(), "rewind-hook")
	if _, err := os.Stat(hook); err != nil {
		return cmdline.WithHint(fmt.Errorf("rewind-hook is not installed beside rewind (%s)", hook), "run ./install.sh from the Rewind source")
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

func (c *configCmd) doc() doc {
	return doc{
		summary: "show or change the configuration",
		text: `Prints the configuration in effect (the global file overlaid by the project's),
as text, or with --json as one object; --tier sets the project's tier;
--register-hooks and --unregister-hooks change the agents' hook files through
rewind-hook, which is installed beside rewind.`,
		examples: []string{
			"rewind config",
			"rewind config --tier aggressive",
			"rewind config --register-hooks --agent claude",
		},
	}
}

// absentNote is " (none)" when no file is at p.
func absentNote(p string) string {
	if fileExists(p) {
		return ""
	}
	return " (none)"
}
