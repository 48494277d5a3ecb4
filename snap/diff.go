package snap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// DiffOptions choose what Diff compares: the snapshot the changes go from
// (From, or FromArchive) and what they go to (the tree at Root, or the
// snapshot To). Exactly one of each is set; a snapshot's archive is
// compared with a tree only.
type DiffOptions struct {
	// From is the snapshot the changes go from, read from its manifest,
	// without opening an archive: files whose metadata is unchanged (and
	// was not racy at scan time) are taken as unchanged, the others are
	// hashed. Opened with OpenManifest, it is read in a pass, not held.
	From *Manifest
	// FromArchive is the snapshot the changes go from, read from its
	// archive instead: file contents are compared byte for byte, and the
	// changes are what a dry run of Restore plans. A plan too big to hold
	// is written to a temporary folder (TMPDIR) as it is made, and its
	// changes handed on as it is read back. It is refused with To.
	FromArchive string
	// Restore adjusts that dry run (with FromArchive only). Its Walk is
	// refused: Walk walks Root.
	Restore RestoreOptions

	// Root is the tree the changes go to, walked as it is compared (not
	// held). On a file system that folds names (see Folding), a path the
	// snapshot spells otherwise than the tree is one path (renamed when
	// only the case of its name differs, never deleted and added).
	Root string
	// Walk adjusts the walk of Root. It is refused with To.
	Walk WalkOptions
	// To is the snapshot the changes go to, instead of a tree. Opened with
	// OpenManifest, it is read in a pass beside From, not held.
	To *Manifest
	// Fold, with To, is how the file system the snapshots were taken on
	// compares names (see ProbeFolding): a path the two spell otherwise is
	// then one path. The zero Folding compares names byte for byte. It is
	// refused with Root, whose file system is probed.
	Fold Folding
}

// Diff lists the changes from one snapshot to a tree or to another
// snapshot (see DiffOptions), in path order, as DiffEach hands them on.
//
// Diff and DiffEach are a pair, as Walk and WalkEach are, rather than one
// function with a callback option: the result says whether the changes
// are held (a slice) or handed on and let go (DiffEach), and DiffEach is
// the one a caller reaches for over a tree too large to hold its list.
func Diff(ctx context.Context, opts DiffOptions) ([]Change, error) {
	var out []Change
	err := DiffEach(ctx, opts, func(ch Change) error {
		out = append(out, ch)
		return nil
	})
	return out, err
}

// DiffEach hands fn the changes from one snapshot to a tree or to another
// snapshot (see DiffOptions), in path order, as they are found: the two
// sides are read in a pass, and a change is held only as long as a
// spelling that pairs with it may come (see respeltQueue) or, from an
// archive, as the restore's plan holds it. An error from fn ends the
// comparison and is returned.
func DiffEach(ctx context.Context, opts DiffOptions, fn func(Change) error) error {
	walked := func(w WalkOptions) bool { return len(w.Ignore) > 0 || w.Entries != 0 }
	switch {
	case (opts.From == nil) == (opts.FromArchive == ""):
		return errors.New("snap: Diff compares from one snapshot: set one of DiffOptions.From and FromArchive")
	case (opts.Root == "") == (opts.To == nil):
		return errors.New("snap: Diff compares to one side: set one of DiffOptions.Root (a tree) and To (a snapshot)")
	case opts.FromArchive != "" && opts.To != nil:
		return errors.New("snap: a snapshot's archive is compared with a tree (DiffOptions.Root); compare two snapshots by their manifests (From)")
	case opts.To != nil && walked(opts.Walk):
		return errors.New("snap: DiffOptions.Walk adjusts the walk of Root, and To is a snapshot")
	case opts.Root != "" && opts.Fold != (Folding{}):
		return errors.New("snap: DiffOptions.Fold is for two snapshots; the file system of Root is probed")
	case walked(opts.Restore.Walk):
		return errors.New("snap: DiffOptions.Restore.Walk is not used: set DiffOptions.Walk")
	case opts.To != nil:
		return diffManifests(opts.From, opts.To, opts.Fold, fn)
	case opts.From != nil:
		return diffManifestTree(ctx, opts.Root, opts.From, opts.Walk, fn)
	default:
		r := opts.Restore
		r.Walk = opts.Walk
		return diffArchive(ctx, opts.Root, opts.FromArchive, r, fn)
	}
}

// diffManifestTree hands fn the changes between the snapshot that m
// describes and the tree at root in path order, without opening an archive:
// files whose metadata is unchanged (and was not racy at scan time) are
// taken as unchanged, the others are hashed. An error from fn ends the
// comparison and is returned. The changes are handed on as the tree is
// walked and m read, neither held; on a file system that folds names (see
// Folding), where a path the snapshot spells otherwise than the tree is one
// path (renamed when only the case of its name differs, and never deleted
// and added), a change is held as long as a spelling that pairs with it
// may come (see respeltQueue).
func diffManifestTree(ctx context.Context, root string, m *Manifest, opts WalkOptions, fn func(Change) error) error {
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
