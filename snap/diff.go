package snap

import (
	"context"
	"os"
	"path/filepath"
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
// and added), a change is held as long as a spelling that pairs with it
// may come (see respeltQueue).
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
	// Where names fold, what the merge leaves on one side may be the other
	// side's under another spelling: the changes go through a queue that
	// holds them only as long as that may be (see respeltQueue).
	var q *respeltQueue
	if fold.Folds() {
		q = newRespeltQueue(fold, same, func(e, o *Entry) (Op, error) { return compareEntry(ctx, root, m, e, o) }, emit)
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
			if q != nil {
				a := *e // (the walk's entries are let go as the merge goes)
				return q.added(&a)
			}
			return emit(Change{Type: "change", Op: OpAdded, Path: e.Path, Kind: e.Kind.String()})
		case e == nil:
			if underAny(o.Path, state) || unreadNow(o.Path) { // left out of the walk, and never compared
				return nil
			}
			if q != nil {
				d := *o // (m may be read as the pass goes: see each)
				d.Path, d.Hash, d.Link = strings.Clone(o.Path), strings.Clone(o.Hash), strings.Clone(o.Link)
				return q.deleted(&d)
			}
			return emit(Change{Type: "change", Op: OpDeleted, Path: strings.Clone(o.Path), Kind: o.Kind.String()})
		default:
			op, err := compareEntry(ctx, root, m, e, o)
			if err != nil || op == "" {
				return err
			}
			ch := Change{Type: "change", Op: op, Path: e.Path, Kind: e.Kind.String()}
			if q != nil {
				return q.change(ch)
			}
			return emit(ch)
		}
	})
	if err != nil || q == nil {
		return err
	}
	return q.finish()
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
