package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
	"rewind.dev/snap"
)

type diffCmd struct {
	common
	stat bool
}

func (c *diffCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.stat, "stat", false, "list the changed paths only, no content")
}

// diffLimit bounds the files diff shows content of.
const diffLimit = 1 << 20

func (*diffCmd) takesPaths() {}

func (c *diffCmd) Exec(ctx context.Context, e *env, args []string) error {
	args, paths, err := splitPaths(args)
	if err != nil {
		return err
	}
	if err := needArgs(args, 1, 2, "diff"); err != nil {
		return err
	}
	s, from, err := c.openAt(e, args[0])
	if err != nil {
		return err
	}
	var to *store.Checkpoint
	if len(args) == 2 {
		if to, err = s.Resolve(args[1]); err != nil {
			return err
		}
	}
	ps, err := c.pathspec(s, paths)
	if err != nil {
		return err
	}
	// The changes are shown as they are found, not held: the output is
	// buffered, and flushed however the diff ends.
	tty := isTerminal(e.stdout)
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	be := *e
	be.stdout = out
	show := func(ch snap.Change) error { return be.json(ch) }
	switch {
	case c.json:
	case c.stat:
		show = func(ch snap.Change) error {
			_, err := fmt.Fprintf(out, "%s %s\n", opLetter(ch.Op), changeName(ch))
			return err
		}
	default:
		u, err := newUnified(&be, s, from, to)
		if err != nil {
			return err
		}
		defer u.close()
		show = u.show
	}
	n := 0
	err = s.Diff(ctx, from, to, func(ch snap.Change) error {
		if ps != nil && !ps.Match(ch.Path, ch.Kind == snap.KindDir.String()) {
			return nil
		}
		n++
		return show(ch)
	})
	if err != nil {
		return err
	}
	// A patch of no changes is empty, as git's is: what reads it gets no
	// text that is not a patch. A person at a terminal is told.
	if n == 0 && !c.json && (c.stat || tty) {
		fmt.Fprintln(out, "No changes.")
	}
	return out.Flush()
}

func opLetter(op snap.Op) string {
	switch op {
	case snap.OpAdded:
		return "A"
	case snap.OpDeleted:
		return "D"
	case snap.OpModified:
		return "M"
	case snap.OpRenamed:
		return "R"
	}
	return "m" // mode
}

// changeName is the path a change concerns, with the spelling it has now
// (in the tree, or the later checkpoint) when that differs in case: on a
// file system that folds names (macOS's), the same file. It is for a
// person: each name is quoted as git quotes it (cmdline.QuotePath).
func changeName(ch snap.Change) string {
	if ch.TreePath != "" {
		return cmdline.QuotePath(ch.Path) + " -> " + cmdline.QuotePath(ch.TreePath)
	}
	return cmdline.QuotePath(ch.Path)
}

// nowPath is where a change's file is now: in the tree, or the later
// checkpoint.
func nowPath(ch snap.Change) string {
	if ch.TreePath != "" {
		return ch.TreePath
	}
	return ch.Path
}

// unified writes the changes as a patch (see patch), reading each side of
// a change as it comes: the checkpoints' files in path order (see
// snap.FileReader), the tree's from the tree.
type unified struct {
	p        patch
	s        *store.Store
	old, cur *snap.FileReader // cur nil when the diff is against the tree
}

func newUnified(e *env, s *store.Store, from, to *store.Checkpoint) (*unified, error) {
	u := &unified{p: patch{w: e.stdout, color: e.color}, s: s}
	m, err := snap.OpenManifest(from.ManifestPath()) // (read in one pass as the diff goes: not held)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", from.ID, err)
	}
	u.old = snap.NewFileReader(m, diffLimit)
	if to != nil {
		if m, err = snap.OpenManifest(to.ManifestPath()); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", to.ID, err)
		}
		u.cur = snap.NewFileReader(m, diffLimit)
	}
	return u, nil
}

func (u *unified) close() {
	u.old.Close()
	if u.cur != nil {
		u.cur.Close()
	}
}

func (u *unified) show(ch snap.Change) error {
	if ch.Kind == snap.KindDir.String() && ch.Op != snap.OpModified {
		return nil // a folder added, deleted or chmodded: no patch has a form for it
	}
	var a, b snap.Content
	var err error
	if ch.Op != snap.OpAdded {
		if a, err = u.old.Read(ch.Path); err != nil {
			return err
		}
	}
	if ch.Op != snap.OpDeleted {
		if u.cur != nil {
			b, err = u.cur.Read(nowPath(ch))
		} else {
			b, err = readNow(filepath.Join(u.s.Project, filepath.FromSlash(nowPath(ch))))
		}
		if err != nil {
			return err
		}
	}
	return u.p.write(ch.Path, nowPath(ch), a, b, ch.Op == snap.OpMode || ch.Op == snap.OpRenamed)
}

// readNow reads what the tree holds at name as a checkpoint's FileReader
// reads it: a file's first diffLimit+1 bytes (enough to tell it is too large
// to show), a symlink's target; nothing where it is gone since the walk.
func readNow(name string) (snap.Content, error) {
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return snap.Content{}, nil
	}
	if err != nil {
		return snap.Content{}, err
	}
	c := snap.Content{Mode: fi.Mode().Perm(), Size: fi.Size()}
	switch {
	case fi.Mode().IsRegular():
		c.Kind = snap.KindFile
		f, err := os.Open(name)
		if err != nil {
			return c, err
		}
		defer f.Close()
		c.Data, err = io.ReadAll(io.LimitReader(f, diffLimit+1))
		return c, err
	case fi.Mode()&fs.ModeSymlink != 0:
		c.Kind = snap.KindSymlink
		c.Link, err = os.Readlink(name)
		return c, err
	case fi.IsDir():
		c.Kind = snap.KindDir
	}
	return c, nil
}

func (c *diffCmd) doc() doc {
	return doc{
		args:    "<cp> [<cp2>] [-- <path>...]",
		summary: "changes between a checkpoint and the tree (or two checkpoints)",
		text: `The changes go from <cp> to the tree now, or to <cp2>, as a patch in git's
format: 'git apply' and 'patch -p1' apply it. Paths after -- limit the diff
to those files and folders, as git's pathspecs (see 'rewind help restore').`,
		examples: []string{"rewind diff @0", "rewind diff @3 @0 --stat", "rewind diff @2 -- src '*.md'", "rewind diff @0 > work.patch   # git apply work.patch puts it back after a restore"},
	}
}
