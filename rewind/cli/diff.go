package cli

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

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
	if n == 0 && !c.json {
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

// unified prints each changed text file as a unified diff, the others as
// a line each. The checkpoints' files are read as the changes come, in path
// order (see snap.FileReader).
type unified struct {
	e        *env
	s        *store.Store
	from     *store.Checkpoint
	old, cur *snap.FileReader // cur nil when the diff is against the tree
	toLabel  string
}

func newUnified(e *env, s *store.Store, from, to *store.Checkpoint) (*unified, error) {
	u := &unified{e: e, s: s, from: from, toLabel: "now"}
	m, err := snap.OpenManifest(from.ManifestPath()) // (read in one pass as the diff goes: not held)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", from.ID, err)
	}
	u.old = snap.NewFileReader(m, diffLimit)
	if to != nil {
		if m, err = snap.OpenManifest(to.ManifestPath()); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", to.ID, err)
		}
		u.cur, u.toLabel = snap.NewFileReader(m, diffLimit), to.ID
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
	e := u.e
	if ch.Kind != "file" || ch.Op == snap.OpMode || ch.Op == snap.OpRenamed {
		_, err := fmt.Fprintf(e.stdout, "%s %s (%s)\n", opLetter(ch.Op), changeName(ch), ch.Kind)
		return err
	}
	var a, b []byte
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
			b = readNow(filepath.Join(u.s.Project, filepath.FromSlash(nowPath(ch))))
		}
		if err != nil {
			return err
		}
	}
	if !isText(a) || !isText(b) {
		_, err := fmt.Fprintf(e.stdout, "Binary or large file %s differs\n", changeName(ch))
		return err
	}
	// The names are quoted whole, prefix and all, as git's headers are; the
	// lines of text are shown as they are, as git shows them.
	d := udiff.Unified(cmdline.QuotePath("a/"+ch.Path)+" ("+cmdline.QuoteText(u.from.ID)+")",
		cmdline.QuotePath("b/"+nowPath(ch))+" ("+cmdline.QuoteText(u.toLabel)+")", string(a), string(b))
	_, err = fmt.Fprint(e.stdout, colorDiff(e, d))
	return err
}

// readNow reads the tree's file at name, at most diffLimit+1 bytes (enough
// to tell it is too large to show); nothing of what is not a regular file
// now, or is gone or unreadable since the walk.
func readNow(name string) []byte {
	if fi, err := os.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, diffLimit+1))
	return b
}

func isText(b []byte) bool {
	return len(b) <= diffLimit && bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}

func colorDiff(e *env, d string) string {
	if !e.colors {
		return d
	}
	lines := strings.SplitAfter(d, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
			lines[i] = e.color("1", l)
		case strings.HasPrefix(l, "+"):
			lines[i] = e.color("32", l)
		case strings.HasPrefix(l, "-"):
			lines[i] = e.color("31", l)
		case strings.HasPrefix(l, "@@"):
			lines[i] = e.color("36", l)
		}
	}
	return strings.Join(lines, "")
}

func (c *diffCmd) doc() doc {
	return doc{
		args:    "<cp> [<cp2>] [-- <path>...]",
		summary: "changes between a checkpoint and the tree (or two checkpoints)",
		text: `Paths after -- limit the diff to those files and folders, as git's
pathspecs (see 'rewind help restore').`,
		examples: []string{"rewind diff @0", "rewind diff @3 @0 --stat", "rewind diff @2 -- src '*.md'"},
	}
}
