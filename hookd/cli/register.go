package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"rewind.dev/hookd"
	"rewind.dev/internal/cmdline"
)

// registration is one line register and unregister print per agent.
type registration struct {
	Type  string `json:"type"` // "register", "unregister"
	Agent string `json:"agent"`
	Tier  string `json:"tier,omitempty"`
	hookd.Change
	Skipped string `json:"skipped,omitempty"` // why nothing was done, e.g. "not installed"
	Error   string `json:"error,omitempty"`   // why the file could not be changed (it was left as it was)
}

// failed collects the agents whose hook files could not be changed: each
// is left as it was, and the others are changed all the same (one invalid
// settings file must not keep Rewind out of, or in, every other agent).
type failed []string

func (f *failed) add(r *registration, err error) {
	r.Error = err.Error()
	*f = append(*f, r.Agent+": "+r.Error)
}

func (f failed) err() error {
	if len(f) == 0 {
		return nil
	}
	return cmdline.WithHint(errors.New(strings.Join(f, "; ")), "fix the file by hand (it was left as it was), then run this again")
}

type registerCmd struct {
	agents     string
	tier       string
	hook       string
	settings   string
	binDir     string
	statusLine bool
	listFound  bool
	listKnown  bool
}

func (c *registerCmd) RegisterFlags(fs *flag.FlagSet) {
	cmdline.ChoiceListVar(fs, &c.agents, "agents", "all", append(hookd.AgentNames(), "all", "none"), "a comma-separated list of agents ("+strings.Join(hookd.AgentNames(), ", ")+"), all (the agents found) or none")
	cmdline.ChoiceVar(fs, &c.tier, "tier", "", hookd.TierNames(), "the `TIER`, minimal, balanced or aggressive; recorded in ~/.rewind/config.json (default: the configured tier)")
	fs.StringVar(&c.hook, "hook", "", "the absolute `PATH` of the rewind-hook to register (default: this one)")
	fs.StringVar(&c.settings, "settings", "", "the settings `FILE` to edit (one agent only; default: the one the agent reads)")
	fs.StringVar(&c.binDir, "bin-dir", "", "record the `DIR` where the binaries are linked (first on the agents' PATH; default ~/.local/bin)")
	fs.BoolVar(&c.statusLine, "statusline", false, "also set Claude Code's statusLine to 'rewind statusline' when none is configured")
	fs.BoolVar(&c.listFound, "list-found", false, "print the installed agents, comma-separated, and change nothing")
	fs.BoolVar(&c.listKnown, "list-known", false, "print every agent Rewind knows, comma-separated, and change nothing")
}

func (c *registerCmd) Exec(ctx context.Context, e *env, _ []string) error {
	home, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	if c.listKnown {
		_, err := fmt.Fprintln(e.stdout, strings.Join(hookd.AgentNames(), ","))
		return err
	}
	names, err := selectAgents(c.agents, c.settings, home, true)
	if err != nil {
		return err
	}
	if c.listFound {
		var found []string
		for _, a := range names {
			if a.skip == "" {
				found = append(found, a.name)
			}
		}
		_, err := fmt.Fprintln(e.stdout, strings.Join(found, ","))
		return err
	}
	tier := c.tier
	if tier != "" {
		if _, err := hookd.LoadTier(tier); err != nil {
			return &cmdline.Error{Err: err, Code: cmdline.ExitUsage}
		}
		if _, err := hookd.SetConfigTier(home, tier); err != nil {
			return fmt.Errorf("recording the tier: %w", err)
		}
	} else {
		cfg, err := hookd.LoadConfig(home, "")
		if err != nil {
			return cmdline.WithHint(err, "fix the file, or pass --tier to rewrite its tier")
		}
		tier = cfg.Tier
	}
	if c.binDir != "" {
		if _, err := hookd.SetConfigBinDir(home, c.binDir); err != nil {
			return fmt.Errorf("recording the bin dir: %w", err)
		}
	}
	hook := c.hook
	if hook == "" {
		if hook, err = selfPath(); err != nil {
			return err
		}
	} else if !filepath.IsAbs(hook) {
		return cmdline.Usagef("--hook %q is not an absolute path", hook)
	}
	var bad failed
	for _, a := range names {
		r := registration{Type: "register", Agent: a.name, Tier: tier}
		if a.skip != "" {
			r.Skipped = a.skip
		} else if r.Change, err = hookd.Register(a.path, a.name, tier, hook); err != nil {
			bad.add(&r, err)
		}
		if err := e.out.Encode(r); err != nil {
			return err
		}
		if err := encodeTrust(e, r); err != nil {
			return err
		}
	}
	if sa := hookd.StatusLineAgent(); c.statusLine && sa != nil {
		p, _ := hookd.SettingsPath(home, sa.Name)
		r := registration{Type: "statusline", Agent: sa.Name}
		cmd := filepath.Join(filepath.Dir(hook), "rewind") + " statusline"
		if r.Change, err = hookd.SetStatusLine(p, cmd); err != nil {
			return cmdline.WithHint(fmt.Errorf("statusline: %w", err), "fix the file by hand (nothing was changed), then run this again")
		}
		if !r.Changed {
			r.Skipped = "a statusLine is configured already"
		}
		if err := e.out.Encode(r); err != nil {
			return err
		}
	}
	return bad.err()
}

type unregisterCmd struct {
	agents   string
	settings string
}

func (c *unregisterCmd) RegisterFlags(fs *flag.FlagSet) {
	cmdline.ChoiceListVar(fs, &c.agents, "agents", "all", append(hookd.AgentNames(), "all"), "a comma-separated list of agents ("+strings.Join(hookd.AgentNames(), ", ")+") or all")
	fs.StringVar(&c.settings, "settings", "", "the settings `FILE` to edit (one agent only; default: the one the agent reads)")
}

func (c *unregisterCmd) Exec(ctx context.Context, e *env, _ []string) error {
	home, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	names, err := selectAgents(c.agents, c.settings, home, false)
	if err != nil {
		return err
	}
	var bad failed
	for _, a := range names {
		r := registration{Type: "unregister", Agent: a.name}
		if r.Change, err = hookd.Unregister(a.path, a.name); err != nil {
			bad.add(&r, err)
			if err := e.out.Encode(r); err != nil {
				return err
			}
			continue
		}
		if t := r.Change.Trust; t != nil && !t.Changed {
			r.Change.Trust = nil // (a trust file with nothing of Rewind's: nothing to say about it)
		}
		if !r.Changed && r.Change.Trust == nil {
			// Nothing of Rewind's was there: the line says so, not that
			// a file it never touched is "up to date".
			r.Skipped = "no Rewind hooks in it"
			if _, err := os.Lstat(a.path); err != nil {
				r.Skipped = "no such file"
			}
		}
		if err := e.out.Encode(r); err != nil {
			return err
		}
		if err := encodeTrust(e, r); err != nil {
			return err
		}
		if sa := hookd.StatusLineAgent(); sa != nil && a.name == sa.Name && c.settings == "" {
			// The status line install.sh --statusline set goes too.
			s := registration{Type: "statusline", Agent: a.name}
			if s.Change, err = hookd.UnsetStatusLine(a.path); err != nil {
				return err
			}
			if s.Changed {
				if err := e.out.Encode(s); err != nil {
					return err
				}
			}
		}
	}
	return bad.err()
}

// encodeTrust prints, for an agent with a hook trust gate (Codex), a line of type "trust"
// saying what was done to its trust records, after the agent's register or unregister line.
func encodeTrust(e *env, r registration) error {
	if r.Change.Trust == nil || r.Skipped != "" {
		return nil
	}
	return e.out.Encode(registration{Type: "trust", Agent: r.Agent, Tier: r.Tier, Change: *r.Change.Trust})
}

type chosenAgent struct {
	name, path, skip string
}

// selectAgents validates --agents: "all" is every agent that looks
// installed when registering (every known agent when unregistering), "none"
// is none.
func selectAgents(list, settings, home string, registering bool) ([]chosenAgent, error) {
	var names []string
	auto := false
	switch list {
	case "none":
		if settings != "" {
			return nil, cmdline.Usagef("--settings needs one agent in --agents")
		}
		return nil, nil
	case "all", "":
		names, auto = hookd.AgentNames(), registering
	default:
		for _, n := range strings.Split(list, ",") {
			n = strings.TrimSpace(n)
			if _, err := hookd.LookupAgent(n); err != nil {
				return nil, cmdline.Usagef("--agents: %v", err)
			}
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if settings != "" && (len(names) != 1 || list == "all") {
		return nil, cmdline.Usagef("--settings needs exactly one agent in --agents")
	}
	var out []chosenAgent
	for _, n := range names {
		a, _ := hookd.LookupAgent(n)
		c := chosenAgent{name: n, path: settings}
		if c.path == "" {
			c.path, _ = hookd.SettingsPath(home, n)
		}
		if auto && !a.Installed(home, exec.LookPath) {
			c.skip = "not installed"
		}
		out = append(out, c)
	}
	return out, nil
}

func selfPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(self)
}
