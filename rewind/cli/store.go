package cli

import (
	"context"
	"flag"
	"fmt"

	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

type storeCmd struct{ common }

func (c *storeCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

// storeJSON is what 'rewind store --json' prints.
type storeJSON struct {
	Type    string      `json:"type"` // "store"
	Project string      `json:"project"`
	Store   string      `json:"store"`
	Mode    layout.Mode `json:"mode"`
}

func (c *storeCmd) Exec(ctx context.Context, e *env, args []string) error {
	switch {
	case len(args) == 0:
		s, err := c.open(e)
		if err != nil {
			return err
		}
		if c.json {
			return e.json(storeJSON{Type: "store", Project: s.Project, Store: s.Dir, Mode: s.Mode})
		}
		fmt.Fprintf(e.stdout, "%s\n", cmdline.QuotePath(s.Dir))
		return nil
	case args[0] == "move" && len(args) == 2:
		to := layout.Mode(args[1])
		if to != layout.ModeGlobal && to != layout.ModeProject {
			return cmdline.Usagef("'rewind store move' takes project or global")
		}
		s, err := c.open(e)
		if err != nil {
			return err
		}
		ctx, stop := e.progress(ctx, "moving the store")
		moved, res, err := s.Move(ctx, to)
		stop()
		if err != nil {
			return err
		}
		if c.json {
			return e.json(res)
		}
		if res.From == res.To {
			fmt.Fprintf(e.stdout, "The store of %s is in %s mode already: %s\n", cmdline.QuotePath(moved.Project), to, cmdline.QuotePath(moved.Dir))
			return nil
		}
		fmt.Fprintf(e.stdout, "Moved the store of %s to %s (%s mode)\n", cmdline.QuotePath(moved.Project), cmdline.QuotePath(moved.Dir), to)
		return nil
	case args[0] == "attach" && len(args) == 2:
		project, err := c.projectDir(e)
		if err != nil {
			return err
		}
		old, err := absPath(args[1])
		if err != nil {
			return err
		}
		s, err := store.Attach(project, old)
		if err != nil {
			return err
		}
		if c.json {
			return e.json(storeJSON{Type: "store", Project: s.Project, Store: s.Dir, Mode: s.Mode})
		}
		fmt.Fprintf(e.stdout, "The store of %s is now the store of %s: %s\n", cmdline.QuotePath(old), cmdline.QuotePath(s.Project), cmdline.QuotePath(s.Dir))
		return nil
	}
	return cmdline.Usagef("use 'rewind store', 'rewind store move project|global' or 'rewind store attach OLD-FOLDER'")
}

func (c *storeCmd) doc() doc {
	return doc{
		args:    "[move project|global | attach <old-folder>]",
		summary: "say where the store is, move it between the modes, or take over a moved project's",
		text: `Without arguments, prints the folder of the project's store (--json: with the
project and the mode).

A store in global mode (the default for new stores) lives in
~/.rewind/storage/<id>/, outside the project: git clean -fdx, git stash --all,
rm -rf of the project and anything else run in it leave it alone. A project
finds it by the mark in its repository's git directory (.git/rewind-store,
which moves with the repository and which a clone has not: two clones never
share a store), else by its path (a folder deleted and made again at the same
path finds its checkpoints). A store in project mode lives in
<project>/.agent/rewind/, beside the code.

'move project|global' moves the store, checkpoints and all, into that mode: a
rename where both places share a file system, else a copy that becomes the
store in one step; killed at any instant, the project still has one whole
store, and running the command again finishes the move.

'attach <old-folder>' makes the global store of a project that was at
old-folder this project's: for a project moved to another folder that is no
git repository (a repository finds its store by its mark).`,
		examples: []string{
			"rewind store",
			"rewind store move global   # out of the project, where git clean cannot reach it",
			"rewind store attach ~/old/place/app",
		},
	}
}
