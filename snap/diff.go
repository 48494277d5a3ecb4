package snap

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// DiffManifest lists the changes between the snapshot that m describes and
// the tree at root, as DiffManifestEach hands them on.
func DiffManifest(ctx context.Context, root string, m *Manifest, opts WalkOptions) ([]Change, error) {
	var out []Change
	err := DiffManifestEach(ctx, root, m, opts, func(ch Change) error {
		out = append(out, ch)
		return nil
	})
	return out, err
}

// DiffManifestEach hands fn the changes between the snapshot that m
// describes and the tree at root in path order, without opening an archive:
// files whose metadata is unchanged (and was not racy at scan time) are
// taken as unchanged, the others are hashed. An error from fn ends the
// comparison and is returned. The changes are handed on as the tree is
// walked and m read, neither held; on a file system that folds names (see
// Folding), where a path the snapshot spells otherwise than the tree is one
// path (renamed when only the case of its name differs, and never deleted
// and added), they are held to be paired, and handed on once the walk is
// done.
func DiffManifestEach(ctx context.Context, root string, m *Manifest, opts WalkOptions, fn func(Change) error) error {
	fold := ProbeFolding(root)
	same := sameSpelt(func(name string) (os.FileInfo, error) { return os.Lstat(filepath.Join(root, name)) })
	return diffTree(ctx, root, opts, m, fold, same, fn)
}

// diffTree compares the tree at root, walked with opts as it is compared
// (the tree is not held), with the snapshot m, handing each change to emit.
// On a file system that folds names, fold and same (see spellings) pair the
// paths that the merge of the two lists leaves on one side only.
func diffTree(ctx context.Context, root string, opts WalkOptions, m *Manifest, fold Folding, same func(treePath, snapPath string) bool, emit func(Change) error) error {
	// Where names fold, what the merge leaves on one side is paired by
	// spelling once the walk is done: the changes are held till then.
	held := fold.Folds()
	var out []Change
	add := func(ch Change) error {
		if held {
			out = append(out, ch)
			return nil
		}
		return emit(ch)
	}
	state := stateExcludes(root)
	for _, u := range m.Header.Unreadable {
		state[u] = true // what could not be read, then or now, is not compared
	}
	// What the walk cannot read now is left out of it, and not compared
	// either: it is known before the merge goes past it (see unreadable).
	var mu sync.Mutex
	now := map[string]bool{}
	opts.unreadable = func(p string) {
		mu.Lock()
		now[p] = true
		mu.Unlock()
	}
	unreadNow := func(p string) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(now) > 0 && underAny(p, now)
	}
	var added, deleted []*Entry // left on one side by the merge, where names fold
	n := 0
	_, err := walkMerged(ctx, root, opts, m.each, func(o, e *Entry) error {
		if n++; n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		switch {
		case o == nil:
			if underAny(e.Path, state) {
				return nil
			}
			if held {
				a := *e // (the walk's entries are let go as the merge goes)
				added = append(added, &a)
				return nil
			}
			return emit(Change{Type: "change", Op: OpAdded, Path: e.Path, Kind: e.Kind.String()})
		case e == nil:
			if underAny(o.Path, state) || unreadNow(o.Path) { // left out of the walk, and never compared
				return nil
			}
			if held {
				d := *o // (m may be read as the pass goes: see each)
				d.Path, d.Hash, d.Link = strings.Clone(o.Path), strings.Clone(o.Hash), strings.Clone(o.Link)
				deleted = append(deleted, &d)
				return nil
			}
			return emit(Change{Type: "change", Op: OpDeleted, Path: strings.Clone(o.Path), Kind: o.Kind.String()})
		default:
			op, err := compareEntry(ctx, root, m, e, o)
			if err != nil || op == "" {
				return err
			}
			return add(Change{Type: "change", Op: op, Path: e.Path, Kind: e.Kind.String()})
		}
	})
	if err != nil || !held {
		return err
	}
	pairs := pairSpellings(added, deleted, fold, same)
	for _, e := range added {
		if pairs.tree[e] == nil {
			out = append(out, Change{Type: "change", Op: OpAdded, Path: e.Path, Kind: e.Kind.String()})
		}
	}
	for _, o := range deleted {
		e := pairs.snap[o]
		if e == nil {
			out = append(out, Change{Type: "change", Op: OpDeleted, Path: o.Path, Kind: o.Kind.String()})
			continue
		}
		op, err := compareEntry(ctx, root, m, e, o)
		if err != nil {
			return err
		}
		if op == "" && respelled(e.Path, o.Path) {
			op = OpRenamed
		}
		if op != "" {
			out = append(out, Change{Type: "change", Op: op, Path: o.Path, Kind: e.Kind.String(), TreePath: treeName(e, o.Path)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return comparePaths(out[i].Path, out[j].Path) < 0 })
	for _, ch := range out {
		if err := emit(ch); err != nil {
			return err
		}
	}
	return nil
}

// compareEntry compares the tree's entry e with the snapshot's o, which
// name the same path: "" when they are the same.
func compareEntry(ctx context.Context, root string, m *Manifest, e, o *Entry) (Op, error) {
	switch {
	case e.Kind != o.Kind || e.Link != o.Link:
		return OpModified, nil
	case e.Kind == KindFile && !(e.sameStat(o) && !m.racy(o)):
		if e.Size != o.Size {
			return OpModified, nil
		}
		h, err := hashFile(ctx, filepath.Join(root, filepath.FromSlash(e.Path)))
		if err != nil && (unreadableErr(err) || changed(err)) {
			return "", nil // unreadable, or changing under the diff: not compared
		}
		if err != nil {
			return "", err
		}
		if h != o.Hash {
			return OpModified, nil
		}
		if e.Mode != o.Mode {
			return OpMode, nil
		}
	case e.Mode != o.Mode:
		return OpMode, nil
	}
	return "", nil
}

// spelt pairs entries of a tree (or a later snapshot) with a snapshot's
// that name the same path spelt otherwise; both maps nil when none do.
type spelt struct {
	snap map[*Entry]*Entry // the snapshot's entry -> the tree's
	tree map[*Entry]*Entry // the tree's entry -> the snapshot's
}

// pairSpellings pairs the tree's entries the snapshot lacks with the
// snapshot's entries the tree lacks that name one file on a file system
// that folds names (fold and same as for spellings).
func pairSpellings(tree, snap []*Entry, fold Folding, same func(treePath, snapPath string) bool) spelt {
	var p spelt
	if !fold.Folds() || len(tree) == 0 || len(snap) == 0 {
		return p
	}
	s := newSpellings(fold, same)
	s.tree = tree
	for _, o := range snap {
		if e := s.find(o.Path); e != nil {
			if p.snap == nil {
				p.snap, p.tree = map[*Entry]*Entry{}, map[*Entry]*Entry{}
			}
			p.snap[o], p.tree[e] = e, o
		}
	}
	return p
}
