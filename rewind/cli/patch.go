package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"rewind.dev/internal/cmdline"
	"rewind.dev/snap"
)

// patch writes changes in git's patch format, the one 'git diff' writes:
// 'git apply' and 'patch -p1' apply it. Each file is a "diff --git a/X b/X"
// section with git's extended headers (new file mode, deleted file mode,
// old mode and new mode, rename from and rename to), then its hunks, or git's
// line for a binary file. What git has no form for is left out, as git
// leaves it: folders (empty ones, their modes), and permission bits other
// than the owner's execute bit. No "index" line is written: Rewind keeps
// SHA-256 digests, not git's object names, and a text patch applies without
// one (a binary change needs one, and git's binary form: 'git apply'
// refuses those, as it refuses git's own without --binary).
type patch struct {
	w     io.Writer
	color func(code, s string) string // an SGR code around s, or s as it is
}

// Git's file modes (see git's cache.h): the owner's execute bit is the only
// permission bit git keeps.
const (
	gitFile    = 0o100644
	gitExec    = 0o100755
	gitSymlink = 0o120000
	gitTypes   = 0o170000
)

// gitMode is the mode git records for c: 0 for what git does not record
// (nothing, a folder).
func gitMode(c snap.Content) int {
	switch c.Kind {
	case snap.KindFile:
		if c.Mode&0o100 != 0 {
			return gitExec
		}
		return gitFile
	case snap.KindSymlink:
		return gitSymlink
	}
	return 0
}

// body is what git diffs of c: a file's content, a symlink's target.
func body(c snap.Content) []byte {
	if c.Kind == snap.KindSymlink {
		return []byte(c.Link)
	}
	return c.Data
}

// binary reports whether git would show c as binary: a NUL byte in its
// first 8000 bytes (git's buffer_is_binary). A file larger than the limit a
// diff reads is taken as binary too, as git takes one over
// core.bigFileThreshold.
func binary(c snap.Content) bool {
	if c.Kind != snap.KindFile {
		return false
	}
	return c.Size > diffLimit || len(c.Data) > diffLimit || bytes.IndexByte(c.Data[:min(len(c.Data), 8000)], 0) >= 0
}

// write writes the change from a at path from to b at path to (the same
// path but for a respelt name): a is the zero Content for an added path, b
// for a deleted one. same says the content is known to be unchanged (only
// the mode, or the spelling, changed), for files too large to compare.
func (p *patch) write(from, to string, a, b snap.Content, same bool) error {
	ma, mb := gitMode(a), gitMode(b)
	if ma != 0 && mb != 0 && ma&gitTypes != mb&gitTypes {
		// A file that became a symlink, or the reverse: git writes a
		// deletion, then a creation.
		if err := p.write(from, from, a, snap.Content{}, false); err != nil {
			return err
		}
		return p.write(to, to, snap.Content{}, b, false)
	}
	if ma == 0 && mb == 0 {
		return nil
	}
	// The names are quoted whole, prefix and all, as git quotes them.
	nameA, nameB := cmdline.QuotePath("a/"+from), cmdline.QuotePath("b/"+to)
	labelA, labelB := nameA, nameB
	var h strings.Builder
	fmt.Fprintf(&h, "diff --git %s %s\n", nameA, nameB)
	switch {
	case ma == 0:
		fmt.Fprintf(&h, "new file mode %06o\n", mb)
		labelA = "/dev/null"
	case mb == 0:
		fmt.Fprintf(&h, "deleted file mode %06o\n", ma)
		labelB = "/dev/null"
	default:
		if ma != mb {
			fmt.Fprintf(&h, "old mode %06o\nnew mode %06o\n", ma, mb)
		}
		if from != to {
			if same {
				h.WriteString("similarity index 100%\n")
			}
			fmt.Fprintf(&h, "rename from %s\nrename to %s\n", cmdline.QuotePath(from), cmdline.QuotePath(to))
		}
	}
	shown := ma != mb || from != to // a header git shows with no hunks
	ba, bb := body(a), body(b)
	if binary(a) || binary(b) {
		unchanged := ma != 0 && mb != 0 && (same || a.Size <= diffLimit && b.Size <= diffLimit && bytes.Equal(ba, bb))
		if unchanged && !shown {
			return nil
		}
		if err := p.meta(h.String()); err != nil || unchanged {
			return err
		}
		_, err := fmt.Fprintf(p.w, "Binary files %s and %s differ\n", labelA, labelB)
		return err
	}
	edits := udiff.Lines(string(ba), string(bb))
	if len(edits) == 0 && !shown {
		return nil
	}
	if err := p.meta(h.String()); err != nil || len(edits) == 0 {
		return err
	}
	// git ends a name that holds a space with a tab, so that patch(1) does
	// not take what follows the space for a date.
	if strings.Contains(labelA, " ") {
		labelA += "\t"
	}
	if strings.Contains(labelB, " ") {
		labelB += "\t"
	}
	d, err := udiff.ToUnified(labelA, labelB, string(ba), edits, udiff.DefaultContextLines)
	if err != nil {
		return err
	}
	var out strings.Builder
	for i, l := range strings.SplitAfter(d, "\n") {
		switch {
		case i < 2: // "---" and "+++"
			l = p.paint("1", l)
		case strings.HasPrefix(l, "@@"):
			l = p.paint("36", l)
		case strings.HasPrefix(l, "+"):
			l = p.paint("32", l)
		case strings.HasPrefix(l, "-"):
			l = p.paint("31", l)
		}
		out.WriteString(l)
	}
	_, err = io.WriteString(p.w, out.String())
	return err
}

// meta writes header lines, in bold as git's are.
func (p *patch) meta(h string) error {
	var out strings.Builder
	for _, l := range strings.SplitAfter(h, "\n") {
		out.WriteString(p.paint("1", l))
	}
	_, err := io.WriteString(p.w, out.String())
	return err
}

// paint colours a line, its newline left outside the colour.
func (p *patch) paint(code, l string) string {
	if l == "" || p.color == nil {
		return l
	}
	text, nl := strings.CutSuffix(l, "\n")
	s := p.color(code, text)
	if nl {
		s += "\n"
	}
	return s
}
