package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

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
	changes, err := s.Diff(ctx, from, to)
	if err != nil {
		return err
	}
	if ps != nil {
		changes = slices.DeleteFunc(changes, func(ch snap.Change) bool { return !ps.Match(ch.Path, ch.Kind == snap.KindDir.String()) })
	}
	if c.json {
		for i := range changes {
			if err := e.json(changes[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(changes) == 0 {
		fmt.Fprintln(e.stdout, "No changes.")
		return nil
	}
	if c.stat {
		for _, ch := range changes {
			fmt.Fprintf(e.stdout, "%s %s\n", opLetter(ch.Op), changeName(ch))
		}
		return nil
	}
	return c.unified(e, s, from, to, changes)
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
// file system that folds names (macOS's), the same file.
func changeName(ch snap.Change) string {
	if ch.TreePath != "" {
		return ch.Path + " -> " + ch.TreePath
	}
	return ch.Path
}

// nowPath is where a change's file is now: in the tree, or the later
// checkpoint.
func nowPath(ch snap.Change) string {
	if ch.TreePath != "" {
		return ch.TreePath
	}
	return ch.Path
}

// unified prints each changed text file as a unified diff.
func (c *diffCmd) unified(e *env, s *store.Store, from, to *store.Checkpoint, changes []snap.Change) error {
	want := map[string]bool{}
	for _, ch := range changes {
		if ch.Kind == "file" && ch.Op != snap.OpAdded {
			want[ch.Path] = true
		}
	}
	oldData, err := readSnapshot(from, want)
	if err != nil {
		return err
	}
	var newData map[string][]byte
	if to != nil {
		want = map[string]bool{}
		for _, ch := range changes {
			if ch.Kind == "file" && ch.Op != snap.OpDeleted {
				want[nowPath(ch)] = true
			}
		}
		if newData, err = readSnapshot(to, want); err != nil {
			return err
		}
	}
	toLabel := "now"
	if to != nil {
		toLabel = to.ID
	}
	for _, ch := range changes {
		if ch.Kind != "file" || ch.Op == snap.OpMode || ch.Op == snap.OpRenamed {
			fmt.Fprintf(e.stdout, "%s %s (%s)\n", opLetter(ch.Op), changeName(ch), ch.Kind)
			continue
		}
		var a, b []byte
		if ch.Op != snap.OpAdded {
			a = oldData[ch.Path]
		}
		if ch.Op != snap.OpDeleted {
			if to != nil {
				b = newData[nowPath(ch)]
			} else {
				b, _ = os.ReadFile(filepath.Join(s.Project, filepath.FromSlash(nowPath(ch))))
			}
		}
		if !isText(a) || !isText(b) {
			fmt.Fprintf(e.stdout, "Binary or large file %s differs\n", changeName(ch))
			continue
		}
		d := udiff.Unified("a/"+ch.Path+" ("+from.ID+")", "b/"+nowPath(ch)+" ("+toLabel+")", string(a), string(b))
		fmt.Fprint(e.stdout, colorDiff(e, d))
	}
	return nil
}

func readSnapshot(c *store.Checkpoint, want map[string]bool) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(want) == 0 {
		return out, nil
	}
	m, err := snap.OpenManifest(c.ManifestPath()) // (the few files wanted are found in one pass: not held)
	if err != nil {
		return nil, err
	}
	err = snap.ReadFiles(m, want, diffLimit, func(p string, data []byte) error {
		out[p] = data
		return nil
	})
	return out, err
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
