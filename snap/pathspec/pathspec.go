// Package pathspec selects paths of a tree as git's pathspecs do
// (gitglossary(7), "pathspec"; git's pathspec.c): the paths a command is
// given after "--". Wildcards match with git's wildmatch, and the tests hold
// the selection to what git ls-files selects.
package pathspec

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"rewind.dev/snap/wildmatch"
)

// Pathspec selects paths of a tree as git's pathspecs do (gitglossary(7),
// "pathspec"): a path is selected when an item names it or a folder above it,
// or when an item with wildcards matches it whole (fnmatch, where * and ?
// also match a slash); items with the exclude magic take paths out again. An
// item is relative to the folder it was given in, unless it has the top
// magic. Magic: long form ":(top,literal,glob,icase,exclude)PATH", short
// form ":/PATH" (top), ":!PATH" and ":^PATH" (exclude). glob makes * and ?
// stop at a slash and lets ** match folders, as in .gitignore (the same
// wildmatch); literal turns wildcards off; icase folds case.
//
// A Pathspec remembers which items selected something (Unmatched).
type Pathspec struct {
	items []specItem
	used  []bool
}

type specItem struct {
	raw     string // as given
	pattern string // relative to the root, slash-separated, cleaned; "" selects everything
	// literal is the length of the pattern's leading part without wildcards
	// (the whole pattern when it has none, or with the literal magic).
	literal int
	dirOnly bool // the item ended in a slash: it names a folder's contents
	glob    bool
	icase   bool
	exclude bool
}

// ErrEmpty is a pathspec item that is an empty string (git refuses it too).
var ErrEmpty = errors.New("an empty string is not a pathspec; use . for everything")

// Error is a pathspec item that cannot be used: unknown magic, or a
// path above the root.
type Error struct {
	Item   string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("pathspec %q: %s", e.Item, e.Reason)
}

// Options say where pathspec items were given.
type Options struct {
	// Cwd is the folder the items were given in, relative to the root
	// (slash-separated; "" or "." for the root itself).
	Cwd string
	// Root is the root's absolute path. An item that is an absolute path
	// names the path it names under Root, whatever Cwd is, as git takes an
	// absolute path inside its work tree: as written, else through the
	// symlinks of its leading folders. One outside Root is refused; so is
	// every absolute item when Root is "". (With the top magic too, where
	// git would look for a path that starts with a slash and find none.)
	Root string
}

// Parse reads pathspec items given as o says.
func Parse(items []string, o Options) (*Pathspec, error) {
	o.Cwd = strings.Trim(path.Clean("/"+o.Cwd), "/")
	ps := &Pathspec{}
	for _, raw := range items {
		it, err := parseSpecItem(raw, o)
		if err != nil {
			return nil, err
		}
		ps.items = append(ps.items, it)
	}
	ps.used = make([]bool, len(ps.items))
	return ps, nil
}

func parseSpecItem(raw string, o Options) (specItem, error) {
	if raw == "" {
		return specItem{}, ErrEmpty
	}
	it := specItem{raw: raw}
	top, literal := false, false
	rest := raw
	if strings.HasPrefix(rest, ":(") {
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return it, &Error{Item: raw, Reason: "the magic has no closing parenthesis"}
		}
		for m := range strings.SplitSeq(rest[2:end], ",") {
			switch strings.TrimSpace(m) {
			case "top":
				top = true
			case "literal":
				literal = true
			case "glob":
				it.glob = true
			case "icase":
				it.icase = true
			case "exclude":
				it.exclude = true
			case "":
			default:
				return it, &Error{Item: raw, Reason: fmt.Sprintf("magic %q is not known (top, literal, glob, icase, exclude are)", m)}
			}
		}
		rest = rest[end+1:]
	} else if strings.HasPrefix(rest, ":") {
		rest = rest[1:]
	short:
		for rest != "" {
			switch rest[0] {
			case '/':
				top = true
			case '!', '^':
				it.exclude = true
			case ':':
				rest = rest[1:]
				break short
			default:
				break short
			}
			rest = rest[1:]
		}
	}
	if literal && it.glob {
		return it, &Error{Item: raw, Reason: "literal and glob exclude each other"}
	}
	it.dirOnly = strings.HasSuffix(rest, "/")
	joined := rest
	switch {
	case strings.HasPrefix(rest, "/") || filepath.IsAbs(rest):
		if o.Root == "" {
			return it, &Error{Item: raw, Reason: "an absolute path; name paths relative to the current folder (or :/PATH from the project's root)"}
		}
		rel, ok := underRoot(o.Root, rest)
		if !ok {
			return it, &Error{Item: raw, Reason: fmt.Sprintf("it is outside the project %s", o.Root)}
		}
		joined = rel
	case !top && o.Cwd != "":
		joined = o.Cwd + "/" + rest
	}
	if joined == "" {
		joined = "."
	}
	clean := path.Clean(joined)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return it, &Error{Item: raw, Reason: "it is outside the project"}
	}
	if clean == "." {
		clean, it.dirOnly = "", false
	}
	it.pattern = clean
	it.literal = len(clean)
	if !literal {
		if i := strings.IndexAny(clean, "*?[\\"); i >= 0 {
			it.literal = i
		}
	}
	return it, nil
}

// underRoot is the absolute path p relative to root (slash-separated, "" for
// root itself), as git's abspath_part_inside_repo finds it: p cleaned,
// under root as written; else the first of p's leading folders (p itself
// last) that is root once symlinks are resolved names the rest. Only those
// folders are resolved: a symlink inside the root names itself, wherever it
// points.
func underRoot(root, p string) (string, bool) {
	p = filepath.Clean(filepath.FromSlash(p))
	roots := []string{filepath.Clean(root)}
	if r, err := filepath.EvalSymlinks(root); err == nil && r != roots[0] {
		roots = append(roots, r)
	}
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && filepath.IsLocal(rel) {
			if rel == "." {
				rel = ""
			}
			return filepath.ToSlash(rel), true
		}
	}
	real := roots[len(roots)-1]
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != filepath.Separator {
			continue
		}
		if r, err := filepath.EvalSymlinks(p[:i]); err == nil && r == real {
			return filepath.ToSlash(strings.TrimLeft(p[i:], string(filepath.Separator))), true
		}
	}
	return "", false
}

// Match reports whether the pathspec selects name (relative to the root,
// slash-separated; isDir: it is a folder): an item that is not an exclusion
// selects it (every path when all items are exclusions), and no exclusion
// does.
func (ps *Pathspec) Match(name string, isDir bool) bool {
	if ps == nil {
		return true
	}
	in, includes := false, false
	for i := range ps.items {
		it := &ps.items[i]
		if it.exclude {
			continue
		}
		includes = true
		if it.match(name, isDir) {
			ps.used[i] = true
			in = true
		}
	}
	if includes && !in {
		return false
	}
	for i := range ps.items {
		if it := &ps.items[i]; it.exclude && it.match(name, isDir) {
			return false
		}
	}
	return true
}

// Unmatched lists the items (not exclusions) that have selected nothing
// Match was asked about.
func (ps *Pathspec) Unmatched() []string {
	if ps == nil {
		return nil
	}
	var out []string
	for i, it := range ps.items {
		if !it.exclude && !ps.used[i] {
			out = append(out, it.raw)
		}
	}
	return out
}

// Forget clears what Unmatched remembers, for a new use of the pathspec.
func (ps *Pathspec) Forget() {
	if ps != nil {
		clear(ps.used)
	}
}

// Items are the pathspec's items as given.
func (ps *Pathspec) Items() []string {
	if ps == nil {
		return nil
	}
	out := make([]string, len(ps.items))
	for i, it := range ps.items {
		out[i] = it.raw
	}
	return out
}

// match is git's match_pathspec_item: the pattern names the path or a
// folder above it (a pattern ending in a slash only a folder), or, with
// wildcards, it matches the path whole.
func (it *specItem) match(name string, isDir bool) bool {
	if it.pattern == "" {
		return true
	}
	p, n, literal := it.pattern, name, it.literal
	if it.icase {
		p, n = strings.ToLower(p), strings.ToLower(n)
		if literal < len(it.pattern) {
			literal = strings.IndexAny(p, "*?[\\")
		} else {
			literal = len(p)
		}
	}
	switch {
	case n == p:
		return isDir || !it.dirOnly
	case strings.HasPrefix(n, p) && n[len(p)] == '/':
		return true
	case literal == len(p) || !strings.HasPrefix(n, p[:literal]):
		return false
	case it.glob:
		// * and ? stop at a slash, ** spans folders.
		return wildmatch.Match(p, n, true)
	}
	// Without the glob magic, * and ? match slashes too.
	return wildmatch.Match(p[literal:], n[literal:], false)
}
