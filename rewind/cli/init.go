package cli

import (
	"context"
	"flag"
	"fmt"

	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

type initCmd struct {
	common
	mode  string
	force bool
	trust bool
}

func (c *initCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	cmdline.ChoiceVar(fs, &c.mode, "mode", "", []string{string(layout.ModeGlobal), string(layout.ModeProject)}, "the store's `MODE`, where it lives: global (~/.rewind/storage/, the default: \"mode\" in ~/.rewind/config.json changes it) or project (.agent/rewind/)")
	fs.BoolVar(&c.force, "force", false, "create the store even in / or in your home folder")
	fs.BoolVar(&c.trust, "trust", false, "adopt the existing store as your own: one you made on another machine or account, which Rewind refuses until then")
}

func (c *initCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "init"); err != nil {
		return err
	}
	mode := layout.Mode(c.mode)
	if mode != "" && mode != layout.ModeProject && mode != layout.ModeGlobal {
		return cmdline.Usagef("--mode is project or global")
	}
	dir := c.project
	if dir == "" {
		wd, gone, err := currentDir()
		if err != nil {
			return err
		}
		if gone != "" {
			return &GoneError{Dir: wd, Project: gone} // (no store for a folder that is gone)
		}
		dir = wd
	}
	project, err := store.FindProject(dir)
	if err != nil {
		return err
	}
	if c.trust {
		s, err := store.Trust(project)
		if err != nil {
			return err
		}
		if c.json {
			return e.json(map[string]any{"type": "init", "store": s.Dir, "project": s.Project, "mode": s.Mode, "created": false, "trusted": true})
		}
		fmt.Fprintf(e.stdout, "Trusted the %s store of %s at %s as your own\n", s.Mode, s.Project, s.Dir)
		return nil
	}
	if why := store.TooBroad(project); why != "" && !c.force {
		if _, err := store.Open(project); err != nil {
			return cmdline.WithHint(fmt.Errorf("will not create a store for %s: %s, and every checkpoint would hold everything under it", project, why),
				"run 'rewind init' in a project folder, or add --force to checkpoint this folder all the same (Rewind's and the agents' own folders are left out)")
		}
	}
	if mode == "" {
		// Not asked for a mode: the store there, whichever it is, else the default.
		mode = store.DefaultMode()
		if s, err := store.Open(project); err == nil {
			mode = s.Mode
		}
	}
	s, created, err := store.Init(project, mode)
	if err != nil {
		return err
	}
	if c.json {
		return e.json(map[string]any{"type": "init", "store": s.Dir, "project": s.Project, "mode": s.Mode, "created": created})
	}
	if created {
		fmt.Fprintf(e.stdout, "Created the %s store for %s at %s\n", s.Mode, cmdline.QuotePath(s.Project), cmdline.QuotePath(s.Dir))
		fmt.Fprintf(e.stdout, "Next: 'rewind save' takes a checkpoint; the hooks take them automatically ('rewind config --register-hooks').\n")
	} else {
		fmt.Fprintf(e.stdout, "%s already has a %s store at %s\n", cmdline.QuotePath(s.Project), s.Mode, cmdline.QuotePath(s.Dir))
	}
	return nil
}

func (c *initCmd) doc() doc {
	return doc{
		summary: "create the checkpoint store",
		text: `In project mode (the default) the store is <project>/.agent/rewind/,
added to .git/info/exclude in a git repository; in global mode it is
~/.rewind/storage/<hash>/ and nothing is added to the project. The project is
the git work tree holding the current folder, else the folder itself.
Running it again changes nothing. It refuses / and your home folder (every
checkpoint would hold everything under them) unless --force.

Rewind uses only stores it made for you: each records an id that
~/.rewind/stores/ holds. A store that came with a cloned repository, an
archive of a project or another user is refused before any of its files is
read; --trust adopts one you made yourself on another machine or account (git
must track none of it, and it must be yours).`,
		examples: []string{
			"rewind init",
			"rewind init --mode global   # keep the project folder clean",
		},
	}
}
