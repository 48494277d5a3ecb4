package snap

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/durable"
	"rewind.dev/snap/pathspec"
)

// RestoreOptions adjust Restore.
type RestoreOptions struct {
	DryRun bool
	// Limits bound what the snapshot may hold; zero fields take the
	// manifest's recorded limits, else DefaultLimits's.
	Limits Limits
	Walk   WalkOptions
	// Manifest, when set, describes the snapshot (a full one or a layer
	// chain): only files that differ from it are read, each from the
	// archive that holds it. Without it the archive is read whole.
	Manifest *Manifest
	// Paths, when set, limits the restore to the paths it selects: the rest
	// of the tree is neither written nor deleted. An item that selects
	// nothing, in the snapshot or the tree, is refused (*UnmatchedError).
	Paths *pathspec.Pathspec
	// Brief leaves out of a dry run's result the lists of what it would
	// write and change the mode of (the counts stay): a check that the
	// restore would go through, in memory that does not grow with it.
	Brief bool
	// Index, for an archive read whole (no Manifest, no Paths), also
	// indexes it in the same read, for Create to adopt (CreateOptions.Adopt):
	// each file's content is hashed as the restore reads it and its place
	// recorded, in RestoreResult.Index. That is nil when the archive is not
	// a full snapshot or holds too many entries to index (then it is not
	// adoptable), and when the restore fails. Index is refused with
	// Manifest or Paths.
	Index bool

	index *ArchiveIndex // where Index fills in the index

	// Set by tests to force a path the production sizes reach only over
	// large trees; zero is the production value.
	spillAt       int    // instead of spillAt
	planWhole     bool   // plan over the whole tree, never over what differs (see sparsePlan)
	planEmpty     bool   // plan a restore into an empty folder too, rather than extract
	adoptHeld     int    // instead of adoptHeld
	sortRun       int    // instead of sortRun
	prefetchAfter int    // instead of prefetchAfter
	wholePlanned  func() // told of each plan made over a whole archive and tree rather than what differs (sparseArchive)
	listHeld      int    // instead of listHeld
	tempDir       string // instead of TMPDIR's (os.TempDir), for the plan, the copy in walk order and the lists
	// original is the archive as the caller named it, where the restore
	// reads its copy in walk order (see withArchiveInOrder): an input all
	// the same.
	original string
}

// RestoreResult says what a restore changed (or, in a dry run, would change).
//
// Written, Deleted, Unchanged and ModeChanged count files (regular files
// and symlinks), as a person counts a tree's files; Folders counts apart
// the folders made, deleted or given another mode.
type RestoreResult struct {
	Type        string   `json:"type"`
	DryRun      bool     `json:"dry_run"`
	Written     int      `json:"written"`
	Deleted     int      `json:"deleted"`
	Unchanged   int      `json:"unchanged"`
	ModeChanged int      `json:"mode_changed"`
	Folders     int      `json:"folders_changed,omitempty"`
	Renamed     int      `json:"renamed,omitempty"`      // on a file system that folds names (see Folding)
	WrittenList PathList `json:"written_paths,omitzero"` // in a dry run
	DeletedList PathList `json:"deleted_paths,omitzero"`
	RenamedList []Rename `json:"renamed_paths,omitempty"`    // on a file system that folds names (see Folding)
	ModeList    PathList `json:"mode_paths,omitzero"`        // in a dry run
	Kept        []string `json:"kept_folders,omitempty"`     // folders not in the snapshot kept because they hold ignored files
	LeftIgnored []string `json:"spared_paths,omitempty"`     // not in the snapshot but ignored by its rules, so left alone
	Inputs      []string `json:"kept_inputs,omitempty"`      // the snapshot's own archive and manifests, in the tree: never deleted or written
	Unreadable  []string `json:"unreadable_paths,omitempty"` // could not be read, now or when the snapshot was taken: left alone
	// Index is the archive's index (see RestoreOptions.Index), or nil.
	Index *ArchiveIndex `json:"-"`
}

// Changed reports whether the restore changed (or would change) anything
// in the tree.
func (r *RestoreResult) Changed() bool {
	return r.Written+r.Deleted+r.ModeChanged+r.Folders+r.Renamed > 0
}

// Close removes the temporary files that hold the result's longest lists
// (see PathList), once they are printed.
func (r *RestoreResult) Close() error {
	return errors.Join(r.WrittenList.Close(), r.DeletedList.Close(), r.ModeList.Close())
}

// Rename is a tree's entry a restore gives the snapshot's spelling of its
// name, on a file system that takes both spellings for one name (see
// Folding): the same file, renamed in place, never deleted.
type Rename struct {
	From string `json:"from"` // the tree's spelling
	To   string `json:"to"`   // the snapshot's
}

// Change is one difference between a snapshot and a tree, seen from the
// snapshot.
type Change struct {
	Type string `json:"type"`
	Op   Op     `json:"op"`
	Path string `json:"path"` // the snapshot's spelling (the tree's for an added path)
	Kind string `json:"kind"`
	// On a file system that folds names (see Folding), the tree's (or the
	// later snapshot's) spelling of Path where it differs beyond Unicode
	// normalisation: in case, here or in a folder above.
	TreePath string `json:"tree_path,omitempty"`
}

// Op is what changed about a path.
type Op string

const (
	OpAdded    Op = "added"    // in the tree only
	OpDeleted  Op = "deleted"  // in the snapshot only
	OpModified Op = "modified" // its content (or kind, or link target) differs
	OpMode     Op = "mode"     // only its permissions differ
	OpRenamed  Op = "renamed"  // only the case of its name differs, on a file system that takes both for one name
)

// Restore makes the scope of the tree at root equal to the snapshot in
// archive: it writes the entries that differ, deletes what the snapshot does
// not have, and never touches ignored files. Files whose content and mode
// already match are left alone, mtimes and all; written files get the
// current time, so build tools see them as changed.
//
// It works in two phases. The first reads the whole archive, refusing any
// unsafe entry, and stages new content inside a folder at the root
// (.rewind-restore-*), or, for what goes onto a file system mounted inside
// the tree, in one at the top of that mount (see mount); if the archive is
// bad, or the plan would change a mount it cannot, the staging folders are
// removed and the tree is as it was. The second deletes, creates folders, and renames
// staged files into place, all through an os.Root so nothing lands outside
// root, and never through a symlink. A whole archive restored into an empty
// folder is written as it is read instead, into a staging folder moved up
// at the end (see extract): nothing is held per file. Over a tree, the
// archive is read beside the walk, and the plan made over what differs
// (see sparseArchive). An archive out of walk order (not Rewind's) is
// copied into walk order first, in TMPDIR (see inWalkOrder).
func Restore(ctx context.Context, root, archive string, opts RestoreOptions) (*RestoreResult, error) {
	if opts.Index {
		return restoreIndexed(ctx, root, archive, opts)
	}
	var res *RestoreResult
	err := withArchiveInOrder(ctx, root, archive, &opts, func(archive string) (err error) {
		res, err = restore(ctx, root, archive, opts)
		return err
	})
	return res, err
}

// withArchiveInOrder calls fn with archive, and where fn finds it out of
// walk order (errDisordered), with its copy in walk order (see
// inWalkOrder): errors about the copy name archive.
func withArchiveInOrder(ctx context.Context, root, archive string, opts *RestoreOptions, fn func(archive string) error) error {
	err := fn(archive)
	if err != errDisordered {
		return err
	}
	sorted, remove, err := inWalkOrder(ctx, archive, root, opts.Limits.Or(DefaultLimits), cmp.Or(opts.sortRun, sortRun), opts.tempDir)
	if err != nil {
		return err
	}
	defer remove()
	opts.original = archive
	err = fn(sorted)
	if ae := (*ArchiveError)(nil); errors.As(err, &ae) && ae.Archive == sorted {
		ae.Archive = archive
	}
	return err
}

func restore(ctx context.Context, root, archive string, opts RestoreOptions) (*RestoreResult, error) {
	if archive != "" && opts.Manifest == nil && opts.Paths == nil && !opts.DryRun && !opts.planEmpty {
		res, err := extract(ctx, root, archive, opts)
		if err != errNotExtracted {
			return res, err
		}
	}
	p, err := plan(ctx, root, archive, opts.Manifest, opts, !opts.DryRun)
	if err != nil {
		return nil, err
	}
	defer p.close()
	res, err := p.result(opts.DryRun, opts.Brief)
	if err != nil || opts.DryRun {
		return res, err
	}
	kept, err := p.apply()
	res.Kept = kept
	if err != nil {
		return res, &StoppedError{Err: err}
	}
	return res, nil
}

// StoppedError is a restore that stopped part way through changing the tree (its second
// phase): some entries are as the snapshot has them, others as they were. Running it again
// finishes it.
type StoppedError struct{ Err error }

func (e *StoppedError) Error() string { return e.Err.Error() }
func (e *StoppedError) Unwrap() error { return e.Err }

// diffArchive hands fn the changes between the snapshot in archive and
// the tree at root, in path order, comparing file contents byte for byte.
// They are what a dry run of the restore plans: a plan too big to hold is
// written to a temporary folder (TMPDIR) as it is made, and its changes
// handed on as it is read back (see planStore.eachChange). An error from fn ends it
// and is returned.
func diffArchive(ctx context.Context, root, archive string, opts RestoreOptions, fn func(Change) error) error {
	return withArchiveInOrder(ctx, root, archive, &opts, func(archive string) error {
		p, err := plan(ctx, root, archive, opts.Manifest, opts, false)
		if err != nil {
			return err
		}
		defer p.close()
		return p.store.eachChange(fn)
	})
}

type opKind int

const (
	opWrite opKind = iota
	opMkdir
	opChmod
	opRename // the tree's entry, spelt otherwise (from), takes the snapshot's spelling
)

type restoreOp struct {
	kind    opKind
	entry   Entry
	staged  string // name inside the staging folder
	existed bool   // something in scope was at the path (of this kind or another)
	from    string // the tree's spelling of the path, where it differs beyond normalisation (see Folding)
}

type restorePlan struct {
	ctx            context.Context // interrupts phase one (phase two, once begun, finishes)
	root           string
	r              *os.Root
	stage          string        // staging folder name at the root, "" when not staging
	marker         []byte        // its marker's content, which a mount's staging folder of the same name holds too
	mounts         []*mountStage // file systems mounted inside the root, outermost first (see mount)
	archive        string        // the archive read whole, for errors about its entries ("" from a manifest)
	gitRoots       []string      // the root's paths, as given and resolved, once a .git file needs them (see gitFileOK)
	spillOut       bool          // a dry run's plan too big to hold is written outside the tree (see spilledPlan)
	stageLock      *os.File
	snapshot       map[string]Kind
	state          map[string]bool // state folders inside the root: never compared or written
	inputs         map[string]bool // the snapshot's own files inside the root: never deleted or written
	copied         bool            // the archive is a copy in walk order (see withArchiveInOrder)
	leftUnreadable map[string]bool // unreadable now or at snapshot time: neither written nor deleted, nor anything below
	leftInputs     []string        // the snapshot's own files in the tree that were not in it: left alone
	current        []Entry
	cur            treeIndex // the tree's entries by path, and by the snapshot's spelling of it (see lookup)

	// On a file system that folds names (Folding), the snapshot may spell
	// a tree's path otherwise: spell finds the tree's entry, alias maps its
	// path to the snapshot's, and the keyed sets hold the fold keys of leftUnreadable
	// and inputs. All nil elsewhere.
	fold               Folding
	spell              *spellings
	alias              map[string]string
	leftUnreadableKeys map[string]bool
	inputKeys          map[string]bool
	special            map[string]bool
	ops                []restoreOp // made, not yet kept in store (in a plan made in blocks: the block's)
	leftIgnored        []string    // not in the snapshot, but ignored under its rules: left alone
	unchanged          int
	nstaged            int
	stagedDir          string    // the staging folder's folder a file was last staged in (see stageAs)
	stagedOn           string    // and that staging folder
	progress           *Progress // counts staged files (WithProgress)
	// paths limits the plan (RestoreOptions.Paths); outDirs holds the modes of
	// the snapshot's folders it leaves out, for those a path inside needs
	// created, and rulesOnly the ignore files it leaves out that are still
	// read for their rules.
	paths   *pathspec.Pathspec
	outDirs map[string]fs.FileMode
	// replaceChecked holds, in a plan over what differs, the folders the
	// snapshot replaces, each looked at as the walk went through it.
	replaceChecked map[string]*replaceCheck
	// leftAlone is the first folder the snapshot replaces that holds a
	// path left alone, found as the deletions were decided (see
	// leftInReplaced): a restore and its dry run are refused for it.
	leftAlone *LeftAloneError
	rulesOnly []*Entry
	// index, when set (RestoreOptions.Index), gets every entry of the archive
	// read whole, with each file's content hash and place.
	index *ArchiveIndex
	// The sizes RestoreOptions sets (tests), else the production ones.
	spillAt, prefetchAfter int
	listHeld               int    // RestoreOptions.listHeld (0: listHeld)
	tempDir                string // RestoreOptions.tempDir ("": TMPDIR's)
	// store keeps the plan's operations and deletions once they are made.
	store planStore
	// spill, when set, is store written to the staging folder, for the
	// plan differs from the tree in too many entries to hold (see spill.go).
	spill *spilledPlan
	// compared is a plan over an archive whose files were compared with
	// the tree's as it was read (sparseArchive): each file's Src tells
	// what the comparison found (see inTree).
	compared bool
}

// plan compares the tree at root with a snapshot — an archive read whole,
// or, when m is set, a manifest whose files are fetched from their archives
// only where they differ — and stages what must be written.
func plan(ctx context.Context, root, archive string, m *Manifest, opts RestoreOptions, stage bool) (_ *restorePlan, err error) {
	limits := opts.Limits.Or(DefaultLimits)
	if m != nil {
		limits = opts.Limits.Or(limitsOf(m))
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", root, err)
	}
	p := &restorePlan{ctx: ctx, root: root, r: r, snapshot: map[string]Kind{}, state: stateExcludes(root), archive: archive,
		paths: opts.Paths, outDirs: map[string]fs.FileMode{}, index: opts.index, replaceChecked: map[string]*replaceCheck{},
		spillAt: cmp.Or(opts.spillAt, spillAt), prefetchAfter: cmp.Or(opts.prefetchAfter, prefetchAfter),
		listHeld: opts.listHeld, tempDir: opts.tempDir}
	p.paths.Forget()
	var inputs []string
	if archive != "" {
		inputs = append(inputs, archive)
	}
	if opts.original != "" {
		inputs = append(inputs, opts.original)
		p.copied = true
	}
	if m != nil {
		inputs = append(inputs, m.Files()...)
	}
	p.inputs = within(root, inputs)
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	p.progress = progressFrom(ctx)
	if stage {
		p.progress.Begin()
	}
	p.fold = ProbeFolding(root)
	if p.fold.Folds() {
		p.spell = newSpellings(p.fold, sameSpelt(p.r.Lstat))
	}
	if stage || opts.DryRun { // (not for a diff: it changes nothing)
		p.findMounts()
	}
	planned, err := p.planSparse(ctx, archive, m, limits, opts, stage)
	if !planned && err == nil {
		err = p.planWhole(ctx, archive, m, limits, opts, stage)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// planSparse plans the restore over what differs, where it can: the tree
// compared with the manifest m, or with the archive, as it is walked (see
// sparsePlan). planned is false where the plan must be made over the whole
// tree instead (see planWhole).
func (p *restorePlan) planSparse(ctx context.Context, archive string, m *Manifest, limits Limits, opts RestoreOptions, stage bool) (planned bool, err error) {
	if m != nil && p.index == nil && !opts.planWhole {
		if stage {
			// (before the walk, which leaves it out: a plan too big to
			// hold is written into it as the walk goes)
			if err := p.openStage(); err != nil {
				return false, err
			}
		} else {
			// A dry run changes nothing in the tree: a plan too big to
			// hold is written to a temporary folder outside it.
			p.spillOut = true
		}
		// The tree is compared with the manifest as it is walked, and the
		// plan made over what differs (see sparsePlan).
		sp, err := p.sparse(ctx, opts.Walk, m, limits)
		if err != nil {
			return false, err
		}
		if sp != nil {
			if err := p.compare(ctx, sp.tree, nil, m, limits, opts, stage, sp); err != nil {
				return false, err
			}
			return true, nil
		}
	}
	if m == nil && p.index == nil && !opts.planWhole {
		if stage {
			if err := p.openStage(); err != nil {
				return false, err
			}
		} else {
			p.spillOut = true // (as over a manifest, above)
		}
		// The archive is compared with the tree as both are read, each
		// file staged when it differs, and the plan made over what differs
		// as it is over a manifest's.
		rules := newSnapshotRules(p.root, opts.Walk, nil)
		sp, err := p.sparseArchive(ctx, opts.Walk, archive, limits, rules, stage)
		if err != nil {
			return false, err
		}
		if sp != nil {
			if err := p.compare(ctx, sp.tree, nil, &Manifest{File: archive}, limits, opts, stage, sp); err != nil {
				return false, err
			}
			return true, nil
		}
	}
	return false, nil
}

// planWhole plans the restore over the whole tree, walked beside the
// archive read whole (or the manifest m).
func (p *restorePlan) planWhole(ctx context.Context, archive string, m *Manifest, limits Limits, opts RestoreOptions, stage bool) (err error) {
	walk := opts.Walk
	if m != nil {
		p.snapshot = make(map[string]Kind, m.size()) // (every path of it, here)
	} else if opts.wholePlanned != nil {
		opts.wholePlanned()
	}
	type walked struct {
		t   *Tree
		err error
	}
	wc := make(chan walked, 1)
	if walk.Entries == 0 && m != nil {
		// The tree is most often the snapshot's, give or take a change: its
		// list is made at that size and filled as the walk goes, never the
		// tree held twice. (Restored into an empty folder, the list is made
		// for nothing, and is less than the operations the plan then holds.)
		walk.Entries = m.size()
	}
	go func() {
		t, err := Walk(ctx, p.root, walk)
		wc <- walked{t, err}
	}()
	var as *archiveScanner
	if m == nil {
		if p.index != nil { // members, read ahead, tell each entry's place
			as, err = openArchiveMembers(archive, limits, p.fold, true)
		} else {
			as, err = openArchive(archive, limits, p.fold)
		}
		if err != nil {
			<-wc
			return err
		}
		defer as.Close()
	}
	w := <-wc
	if w.err != nil {
		return w.err
	}
	return p.compare(ctx, w.t, as, m, limits, opts, stage, nil)
}

// compare plans the restore of the snapshot (the archive as, or the
// manifest m) over the tree t that was walked at the root.
func (p *restorePlan) compare(ctx context.Context, t *Tree, as *archiveScanner, m *Manifest, limits Limits, opts RestoreOptions, stage bool, sp *sparsePlan) (err error) {
	p.current = t.Entries
	p.cur = treeIndex{entries: p.current}
	if p.spell != nil {
		p.alias = map[string]string{}
		p.leftUnreadableKeys, p.inputKeys = map[string]bool{}, map[string]bool{}
		for i := range p.current {
			p.spell.tree = append(p.spell.tree, &p.current[i])
		}
		for in := range p.inputs {
			p.inputKeys[p.fold.Key(in)] = true
		}
	}
	p.special = map[string]bool{}
	for _, s := range t.Special {
		p.special[s] = true
	}
	p.leftUnreadable = map[string]bool{}
	for _, u := range t.Unreadable {
		p.leaveUnreadable(u)
	}
	if m != nil {
		for _, u := range m.Header.Unreadable {
			p.leaveUnreadable(u)
		}
	}
	if stage && p.stage == "" {
		if err := p.openStage(); err != nil {
			return err
		}
	}
	var rules *snapshotRules
	switch {
	case sp != nil && sp.rules != nil: // (an archive's, read as it was)
		rules = sp.rules
	case m != nil:
		rules = newSnapshotRules(p.root, opts.Walk, m.Header.Rules)
	default:
		rules = newSnapshotRules(p.root, opts.Walk, nil)
	}
	var held *heldPlan
	var replaced []Entry // the folders the snapshot replaces that a plan held deletes
	if p.spill != nil {
		err = p.planSpilled(ctx, m, limits, rules, sp) // (checked a block at a time)
	} else {
		held, replaced, err = p.planHeld(ctx, as, m, limits, stage, rules, sp)
	}
	if err != nil {
		return err
	}
	if sp != nil {
		p.unchanged += sp.dropped
	}
	if un := p.paths.Unmatched(); len(un) > 0 {
		return &UnmatchedError{Items: un}
	}
	if held != nil {
		if err := p.checkSelection(held.ops, replaced); err != nil {
			return err
		}
	}
	if p.leftAlone != nil && (stage || opts.DryRun) { // (a diff lists the changes all the same)
		return p.leftAlone
	}
	return p.checkMounts(stage) // (a diff lists no mounts: see plan)
}

// planHeld makes the plan in memory: from the archive as read whole, or
// from the manifest m (then the files that differ are staged, see
// fetch); then the tree's entries it deletes. In a restore limited to
// paths, replaced is the folders the snapshot replaces that it deletes,
// for checkSelection.
func (p *restorePlan) planHeld(ctx context.Context, as *archiveScanner, m *Manifest, limits Limits, stage bool, rules *snapshotRules, sp *sparsePlan) (_ *heldPlan, replaced []Entry, err error) {
	if m != nil {
		err = p.planManifest(ctx, m, limits, stage, rules, sp)
	} else {
		err = p.fromArchive(ctx, as, stage, rules)
	}
	if err != nil {
		return nil, nil, err
	}
	h := newHeldPlan(p.ops, deletions{each: p.paths != nil, most: p.listHeld, dir: p.tempDir})
	p.ops, p.store = nil, h
	if m != nil && stage {
		if err := p.fetch(ctx, limits, rules); err != nil {
			return nil, nil, err
		}
	}
	var open []string // (see leftInReplaced)
	for i := range p.current {
		c := &p.current[i]
		k, ok := p.snapshot[p.snapName(c.Path)]
		deleted := p.isDeleted(c, ok, k == c.Kind, rules)
		p.leftInReplaced(&open, c, ok, deleted)
		if deleted {
			h.deletes = append(h.deletes, heldDelete{Entry: *c, inSnap: ok})
			if ok && p.paths != nil && c.Kind == KindDir {
				replaced = append(replaced, *c)
			}
		}
	}
	return h, replaced, nil
}

// isDeleted reports whether the tree's entry c is deleted: inSnap says the
// snapshot has its path, sameKind that it has it as c's kind.
func (p *restorePlan) isDeleted(c *Entry, inSnap, sameKind bool, rules *snapshotRules) bool {
	switch {
	case !p.paths.Match(p.snapName(c.Path), c.Kind == KindDir):
		// Outside the paths restored: left as it is.
	case p.isLeftUnreadable(c.Path):
		// Unreadable now or when the snapshot was taken: its content is
		// known to no backup, so it is never deleted.
	case p.isInput(c.Path):
		if !inSnap { // else reported when the snapshot's entry was skipped
			p.leftInputs = append(p.leftInputs, c.Path)
		}
	case inSnap && sameKind:
	case !inSnap && rules.ignored(c.Path, c.Kind == KindDir):
		// In scope now only because the ignore rules changed since the
		// snapshot: under the snapshot's rules it is an ignored file, and
		// a restore never deletes those.
		p.leftIgnored = append(p.leftIgnored, c.Path)
	case c.Kind == KindFile && p.unreadable(c.Path):
		p.leaveUnreadable(c.Path) // no backup can hold it: never deleted
	default:
		return true
	}
	return false
}

// SelectionError is a restore limited to paths that would have to change a
// path outside them: Outside stands where Path goes, or is inside a folder
// Path replaces.
type SelectionError struct{ Path, Outside string }

func (e *SelectionError) Error() string {
	if strings.HasPrefix(e.Outside, e.Path+"/") {
		return fmt.Sprintf("cannot restore %s: the folder there holds %s, outside the paths restored", e.Path, e.Outside)
	}
	return fmt.Sprintf("cannot restore %s: %s stands in its way, outside the paths restored", e.Path, e.Outside)
}

// checkSelection refuses, before anything changes, a restore limited to paths
// that would have to delete a path outside them: a file of the tree where a
// selected path needs a folder (for one of ops), or a folder it replaces (one of deletes)
// that holds paths outside them. A plan written out in blocks is checked a
// block at a time: a block holds the tree's entries above its first (see
// stillAbove); a folder replaced was looked at as the walk went through it
// (see replaceCheck).
func (p *restorePlan) checkSelection(ops []restoreOp, deletes []Entry) error {
	if p.paths == nil {
		return nil
	}
	for _, op := range ops {
		for d := path.Dir(op.entry.Path); d != "."; d = path.Dir(d) {
			if c := p.lookup(d); c != nil && c.Kind != KindDir && !p.paths.Match(d, false) {
				return &SelectionError{Path: op.entry.Path, Outside: c.Path}
			}
		}
	}
	for _, d := range deletes {
		if _, replaced := p.snapshot[p.snapName(d.Path)]; !replaced || d.Kind != KindDir {
			continue
		}
		if rc := p.replaceChecked[d.Path]; rc != nil { // (looked at as the walk went)
			if rc.outside != "" {
				return &SelectionError{Path: d.Path, Outside: rc.outside}
			}
			continue
		}
		for i := range p.current {
			c := &p.current[i]
			if strings.HasPrefix(c.Path, d.Path+"/") && !p.paths.Match(p.snapName(c.Path), c.Kind == KindDir) {
				return &SelectionError{Path: d.Path, Outside: c.Path}
			}
		}
	}
	return nil
}

// UnmatchedError is a restore limited to paths, some of whose items select
// nothing in the snapshot or the tree (ignored files are in neither).
type UnmatchedError struct{ Items []string }

func (e *UnmatchedError) Error() string {
	return fmt.Sprintf("pathspec %q matches nothing in the checkpoint or the tree", e.Items[0])
}

// leftOut notes a snapshot entry outside the paths restored: a folder's mode,
// in case a path inside it needs it created, and an ignore file's rules,
// which decide what the restore may delete. It reports whether the ignore
// file must be fetched from its archive for them.
func (p *restorePlan) leftOut(e *Entry, m *Manifest, rules *snapshotRules) (fetch bool) {
	if e.Kind == KindDir {
		p.outDirs[e.Path] = e.Mode
		return false
	}
	if base := path.Base(e.Path); e.Kind != KindFile || base != ".gitignore" && base != ".rewindignore" || e.Size > 1<<20 {
		return false
	}
	if p.compared {
		return false // (read as the archive was: see sparseArchive)
	}
	if m == nil {
		return true
	}
	if c := p.lookup(e.Path); c != nil && c.Kind == KindFile && c.sameStat(e) && !m.racy(e) {
		if b, err := os.ReadFile(filepath.Join(p.root, filepath.FromSlash(c.Path))); err == nil {
			rules.data[e.Path] = b
			return false
		}
	}
	return true
}

// lookup returns the tree's entry at the snapshot's path name: spelt as the
// snapshot spells it or, on a file system that folds names, otherwise
// (then cur holds it under name too, and alias maps its path to name).
func (p *restorePlan) lookup(name string) *Entry {
	if c := p.cur.get(name); c != nil || p.spell == nil {
		return c
	}
	c := p.spell.find(name)
	if c != nil {
		p.cur.spelt(name, c)
		p.alias[c.Path] = name
	}
	return c
}

// treeIndex finds the tree's entries, which are in walk order, by path: a
// search from where the last one ended, for the plan looks them up in walk
// order too; a map of each would cost the tree's worth again. Names the
// snapshot spells otherwise are kept beside it.
type treeIndex struct {
	entries []Entry
	last    int
	other   map[string]*Entry
}

func (x *treeIndex) get(name string) *Entry {
	if c := x.other[name]; c != nil {
		return c
	}
	n := len(x.entries)
	if n == 0 {
		return nil
	}
	lo, hi := 0, n // the entry is in entries[lo:hi], if anywhere
	switch c := comparePaths(name, x.entries[x.last].Path); {
	case c == 0:
		return &x.entries[x.last]
	case c < 0:
		hi = x.last
	default:
		// Gallop forward from the last one: the next is most often near.
		lo = x.last + 1
		for step := 1; ; step *= 2 {
			at := x.last + step
			if at >= n {
				break
			}
			if comparePaths(name, x.entries[at].Path) <= 0 {
				hi = at + 1
				break
			}
			lo = at + 1
		}
	}
	i := lo + sort.Search(hi-lo, func(k int) bool { return comparePaths(x.entries[lo+k].Path, name) >= 0 })
	if i < n && x.entries[i].Path == name {
		x.last = i
		return &x.entries[i]
	}
	return nil
}

// spelt records the tree's entry c under the snapshot's spelling name.
func (x *treeIndex) spelt(name string, c *Entry) {
	if x.other == nil {
		x.other = map[string]*Entry{}
	}
	x.other[name] = c
}

// snapName is the snapshot's spelling of the tree's path name.
func (p *restorePlan) snapName(name string) string {
	if s, ok := p.alias[name]; ok {
		return s
	}
	return name
}

// leaveUnreadable marks name (a tree's or a snapshot's path) left alone as unreadable.
func (p *restorePlan) leaveUnreadable(name string) {
	p.leftUnreadable[name] = true
	if p.leftUnreadableKeys != nil {
		p.leftUnreadableKeys[p.fold.Key(name)] = true
	}
}

// isLeftUnreadable reports whether name, or a folder above it, is left alone as unreadable, under
// whichever spelling it was marked.
func (p *restorePlan) isLeftUnreadable(name string) bool {
	return underAny(name, p.leftUnreadable) || p.leftUnreadableKeys != nil && underAny(p.fold.Key(name), p.leftUnreadableKeys)
}

// isInput reports whether name is one of the snapshot's own files, under
// whichever spelling the command line gave it.
func (p *restorePlan) isInput(name string) bool {
	return p.inputs[name] || p.inputKeys != nil && p.inputKeys[p.fold.Key(name)]
}

// unreadable reports whether the tree's file name cannot be read (its
// permissions, a failing disk): a backup taken before the restore could not
// hold it, so the restore must not replace or delete it.
func (p *restorePlan) unreadable(name string) bool {
	f, err := p.r.OpenFile(filepath.FromSlash(name), os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return unreadableErr(err)
	}
	f.Close()
	return false
}

// enter records a snapshot entry (and the folders it implies) and checks
// that nothing out of scope stands in its way. It returns the tree's entry
// at the same path, if any: on a file system that folds names, perhaps
// spelt otherwise (its Path is the tree's spelling, and what the tree is
// read by).
func (p *restorePlan) enter(e *Entry) (*Entry, error) {
	if p.stage != "" && strings.Contains(e.Path, p.stage) && slices.Contains(strings.Split(e.Path, "/"), p.stage) {
		// (the root's staging folder, or a mount's of the same name)
		return nil, fmt.Errorf("cannot restore %s: it is the name this restore picked for its staging folder; run the restore again", e.Path)
	}
	if p.special[e.Path] {
		return nil, fmt.Errorf("cannot restore %s: a socket, FIFO or device is in the way; remove it and retry", e.Path)
	}
	// Folders an archive implies without listing them are part of it.
	for _, d := range missingParents(e.Path, p.snapshot) {
		p.snapshot[d] = KindDir
		mode, ok := p.outDirs[d]
		if !ok {
			mode = 0o755
		}
		// (as a folder listed with the mode of the tree's, or 0755)
		implied := Entry{Path: d, Kind: KindDir, Mode: mode}
		switch c := p.lookup(d); {
		case c == nil && !p.ignoredDir(d):
			p.ops = append(p.ops, restoreOp{kind: opMkdir, entry: implied})
		case c != nil && c.Kind != KindDir:
			p.inputInTheWay(c.Path)
			p.ops = append(p.ops, restoreOp{kind: opMkdir, entry: implied, existed: true, from: treeName(c, d)})
		default: // (a folder the same: unchanged, but only files are counted)
			p.respell(&implied, c)
		}
	}
	p.snapshot[e.Path] = e.Kind
	c := p.lookup(e.Path)
	if c != nil && c.Kind != e.Kind && c.Kind == KindDir {
		if err := p.checkReplaceable(c.Path); err != nil {
			return nil, err
		}
	}
	p.respell(e, c)
	return c, nil
}

// inputInTheWay notes, in p.leftAlone, a tree's file at name, where the
// snapshot has a folder, when it is one of the snapshot's own files: the
// restore never deletes those, so it could not make the folder nor write
// what is in it, and would stop half way.
func (p *restorePlan) inputInTheWay(name string) {
	if p.leftAlone == nil && p.isInput(name) {
		p.leftAlone = &LeftAloneError{Path: name, Reason: "input"}
	}
}

// respell plans the rename of the tree's entry c, of e's kind, to e's
// spelling, when the two are spelt otherwise beyond normalisation: a
// restore brings back the snapshot's names, and keeps the file (its
// content, when the same, is not written again). An entry of another kind
// is deleted and written instead.
func (p *restorePlan) respell(e, c *Entry) {
	if c != nil && c.Kind == e.Kind && c.Path != e.Path && respelled(c.Path, e.Path) {
		p.ops = append(p.ops, restoreOp{kind: opRename, entry: *e, from: c.Path, existed: true})
	}
}

// treeName is the tree's spelling of the snapshot's path name, where it
// differs beyond normalisation; "" elsewhere.
func treeName(c *Entry, name string) string {
	if c == nil || sameLook(c.Path, name) {
		return ""
	}
	return c.Path
}

// enterDirOrLink plans a folder or symlink entry.
func (p *restorePlan) enterDirOrLink(e *Entry, c *Entry, stage bool) error {
	switch e.Kind {
	case KindDir:
		switch {
		case c == nil && p.ignoredDir(e.Path):
			// An ignored folder already stands there: use it.
		case c == nil || c.Kind != KindDir:
			if err := p.checkNotInTheWay(e.Path, c); err != nil {
				return err
			}
			p.ops = append(p.ops, restoreOp{kind: opMkdir, entry: *e, existed: c != nil, from: treeName(c, e.Path)})
		case c.Mode != e.Mode:
			p.ops = append(p.ops, restoreOp{kind: opChmod, entry: *e, from: treeName(c, e.Path)})
		}
	case KindSymlink:
		if c != nil && c.Kind == KindSymlink && c.Link == e.Link {
			p.unchanged++
			return nil
		}
		if err := p.checkNotInTheWay(e.Path, c); err != nil {
			return err
		}
		op := restoreOp{kind: opWrite, entry: *e, existed: c != nil, from: treeName(c, e.Path)}
		if stage {
			op.staged = p.nextStaged()
			dir, err := p.stageFor(e.Path)
			if err != nil {
				return err
			}
			if err := p.r.Symlink(e.Link, dir+"/"+op.staged); err != nil {
				return fmt.Errorf("stage %s: %w", e.Path, err)
			}
		}
		p.ops = append(p.ops, op)
	}
	return nil
}

// fromArchive reads a whole archive, comparing each file byte for byte.
func (p *restorePlan) fromArchive(ctx context.Context, as *archiveScanner, stage bool, rules *snapshotRules) error {
	if err := as.refuseLayer(); err != nil {
		return err
	}
	buf := make([]byte, 256*1024)
	buf2 := make([]byte, 256*1024)
	var hashed *hashingReader
	if p.index != nil {
		if as.kind != "full" {
			p.index = nil // not adoptable: nothing is indexed
		} else {
			*p.index = ArchiveIndex{archive: as.name, size: as.csize, entries: map[string]*Entry{}}
			hashed = &hashingReader{h: sha256.New()}
		}
	}
	for n := 0; ; n++ {
		if n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if hashed != nil && hashed.e != nil {
			// What the plan left unread of the last file is hashed too.
			if err := hashed.finish(buf); err != nil {
				return archiveReadErr(hashed.e, err)
			}
		}
		e, content, err := as.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if hashed != nil {
			p.index.entries[e.Path] = e
			if e.Kind == KindFile {
				hashed.start(e, content)
				content = hashed
			}
		}
		if err := as.refuseWhiteout(e); err != nil {
			return err
		}
		if underAny(e.Path, p.state) {
			continue // a snapshot taken before state folders were left out
		}
		if !p.paths.Match(e.Path, e.Kind == KindDir) {
			if p.leftOut(e, nil, rules) {
				rules.add(e.Path, &content)
				if _, err := io.Copy(io.Discard, content); err != nil {
					return err
				}
			}
			continue
		}
		if p.isInput(e.Path) {
			p.keepInput(e)
			continue
		}
		if p.isLeftUnreadable(e.Path) {
			continue // unreadable: left as it is
		}
		c, err := p.enter(e)
		if err != nil {
			return err
		}
		if e.Kind != KindFile {
			if err := p.enterDirOrLink(e, c, stage); err != nil {
				return err
			}
			continue
		}
		if err := p.checkNotInTheWay(e.Path, c); err != nil {
			return err
		}
		if base := path.Base(e.Path); (base == ".gitignore" || base == ".rewindignore") && e.Size <= 1<<20 {
			rules.add(e.Path, &content)
		}
		same, staged, err := p.compareFile(e, c, content, stage, "", buf, buf2)
		if err != nil {
			return err
		}
		if p.leftUnreadable[e.Path] {
			continue
		}
		p.addFile(e, c, same, staged)
	}
}

func (p *restorePlan) addFile(e, c *Entry, same bool, staged string) {
	switch {
	case same && c.Mode == e.Mode:
		p.unchanged++
	case same:
		p.ops = append(p.ops, restoreOp{kind: opChmod, entry: *e, from: treeName(c, e.Path)})
	default:
		p.ops = append(p.ops, restoreOp{kind: opWrite, entry: *e, staged: staged, existed: c != nil, from: treeName(c, e.Path)})
	}
}

// fetchAllAt is how many files of one archive a restore fetches one by one
// (seeking to each) before it reads that archive whole instead.
const fetchAllAt = 64

// planManifest compares the tree with a manifest: a file whose metadata is
// what the manifest recorded (and was not racy then) is unchanged; one of
// the same size is hashed; the others are written, their content fetched
// later. The manifest's entries pass the same checks as an archive's.
func (p *restorePlan) planManifest(ctx context.Context, m *Manifest, limits Limits, stage bool, rules *snapshotRules, sp *sparsePlan) error {
	chk := &archiveScanner{name: m.File, limits: limits, fold: p.fold, ordered: true, csize: 1 << 62}
	if chk.fold.Folds() {
		chk.folded = map[string]string{}
	}
	// A manifest opened with OpenManifest is read as the pass goes: each
	// entry's path and link are copied, for the plan keeps them (its maps
	// are keyed by path), and its hash only where the plan keeps the entry
	// (see own).
	streamed := m.stream != nil && sp == nil
	var read Entry
	i := 0
	step := func(e *Entry) error {
		if i&255 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		i++
		if streamed {
			read = *e
			read.Path, read.Link = strings.Clone(e.Path), strings.Clone(e.Link)
			e = &read
		}
		if sp != nil {
			// (checked as the sparse pass went, every entry of it)
		} else if err := chk.checkEntry(e); err != nil {
			return err
		}
		if underAny(e.Path, p.state) {
			return nil // a snapshot taken before state folders were left out
		}
		if !p.paths.Match(e.Path, e.Kind == KindDir) {
			if p.leftOut(e, m, rules) {
				c := *e // (e may be a block's, reused for the next: see planSpilled)
				p.rulesOnly = append(p.rulesOnly, &c)
			}
			return nil
		}
		if p.isInput(e.Path) {
			p.keepInput(e)
			return nil
		}
		if p.isLeftUnreadable(e.Path) {
			return nil // unreadable: left as it is
		}
		c, err := p.enter(e)
		if err != nil {
			return err
		}
		if e.Kind != KindFile {
			return p.enterDirOrLink(e, c, stage)
		}
		if err := p.checkNotInTheWay(e.Path, c); err != nil {
			return err
		}
		return p.planManifestFile(ctx, m, rules, e, c)
	}
	// own makes what the plan keeps of an entry read as the pass goes its
	// own: the hashes of the operations and ignore files it added.
	own := func(ops, rulesOnly int) {
		for k := ops; k < len(p.ops); k++ {
			p.ops[k].entry.Hash = strings.Clone(p.ops[k].entry.Hash)
		}
		for k := rulesOnly; k < len(p.rulesOnly); k++ {
			p.rulesOnly[k].Hash = strings.Clone(p.rulesOnly[k].Hash)
		}
	}
	each := m.each
	if sp != nil {
		each = func(fn func(e *Entry) error) error {
			for i := range sp.snap {
				if err := fn(&sp.snap[i]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	err := each(func(e *Entry) error {
		ops, rulesOnly := len(p.ops), len(p.rulesOnly)
		err := step(e)
		if streamed {
			own(ops, rulesOnly)
		}
		return err
	})
	return err
}

// planManifestFile plans the manifest m's file e over the tree's entry c
// at its path (if any): unchanged where its metadata is what m recorded
// (and was not racy then) or its content hashes the same, else written;
// over an archive compared as it was read, as that comparison found.
func (p *restorePlan) planManifestFile(ctx context.Context, m *Manifest, rules *snapshotRules, e, c *Entry) error {
	if p.compared {
		// Compared, and staged if it differs, as the archive was read.
		if e.Src == inTree {
			p.addFile(e, c, true, "")
		} else {
			p.addFile(e, c, false, e.Src)
		}
		return nil
	}
	same := false
	if c != nil && c.Kind == KindFile && c.Size == e.Size {
		if c.sameStat(e) && !m.racy(e) {
			same = true
		} else {
			h, err := hashFile(ctx, filepath.Join(p.root, filepath.FromSlash(c.Path)))
			if err != nil && unreadableErr(err) {
				p.leaveUnreadable(e.Path) // it cannot be backed up, so it is not replaced
				return nil
			}
			if err != nil && !changed(err) {
				return err
			}
			same = h == e.Hash
		}
	}
	if base := path.Base(e.Path); (base == ".gitignore" || base == ".rewindignore") && e.Size <= 1<<20 && same {
		if b, err := os.ReadFile(filepath.Join(p.root, filepath.FromSlash(c.Path))); err == nil {
			rules.data[e.Path] = b
		}
	}
	if same {
		p.addFile(e, c, true, "")
		return nil
	}
	if c != nil && c.Kind == KindFile && p.unreadable(c.Path) {
		p.leaveUnreadable(e.Path)
		return nil
	}
	p.addFile(e, c, false, "")
	return nil
}

// fetched tells whether op writes a file whose content the plan has not
// staged yet: one read from a manifest.
func fetched(op *restoreOp) bool {
	return op.kind == opWrite && op.entry.Kind == KindFile && op.staged == ""
}

// fetch stages the content of the files the plan writes from a manifest,
// archive by archive: seeking to each file, or reading the archive whole
// when it holds many of them. Each is staged where stagedAt says.
func (p *restorePlan) fetch(ctx context.Context, limits Limits, rules *snapshotRules) error {
	f := newFetcher()
	defer f.close()
	for _, e := range p.rulesOnly {
		r, err := f.open(e)
		if err != nil {
			return err
		}
		rules.add(e.Path, &r)
		if _, err := io.Copy(io.Discard, r); err != nil {
			return err
		}
	}
	type archiveNeeds struct {
		n   int
		few []need // while fewer than fetchAllAt
	}
	byArchive := map[string]*archiveNeeds{}
	var order []string
	var nf newFolders
	var files, bytes int64 // what is fetched: the progress's totals
	err := p.store.eachOp(func(i int, op *restoreOp) error {
		inside := nf.step(op)
		if !fetched(op) {
			return nil
		}
		files, bytes = files+1, bytes+op.entry.Size
		a := byArchive[op.entry.Src]
		if a == nil {
			a = &archiveNeeds{}
			byArchive[op.entry.Src] = a
			order = append(order, op.entry.Src)
		}
		if a.n++; a.n < fetchAllAt {
			a.few = append(a.few, need{i, op.entry, stagedAt(i, op, inside)})
		} else {
			a.few = nil
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.progress.Expect(files, bytes)
	for _, src := range order {
		a := byArchive[src]
		if a.n >= fetchAllAt {
			if err := p.stageWhole(ctx, src, limits, rules); err != nil {
				return err
			}
			continue
		}
		sort.Slice(a.few, func(i, j int) bool { // (in archive order: one member's files are read on, see fetcher)
			x, y := &a.few[i].e, &a.few[j].e
			return x.COff < y.COff || x.COff == y.COff && x.Skip < y.Skip
		})
		for _, n := range a.few {
			r, err := f.open(&n.e)
			if err != nil {
				return err
			}
			if base := path.Base(n.e.Path); base == ".gitignore" || base == ".rewindignore" {
				rules.add(n.e.Path, &r)
			}
			if err := p.stageAs(&n.e, r, n.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// stageWhole reads the archive src from start to end beside the plan's
// operations, both in walk order, and stages the files they fetch from it,
// checking each against its manifest entry. From a file not met where walk
// order puts it (an archive not in that order, or a damaged one) on, the
// archive is read again, the files wanted looked up by path.
func (p *restorePlan) stageWhole(ctx context.Context, src string, limits Limits, rules *snapshotRules) error {
	as, err := openArchive(src, limits, Folding{})
	if err != nil {
		return err
	}
	defer as.Close()
	as.ordered = true // (checked in walk order: no map of every path)
	var (
		at      *Entry // the archive's entry read last, not yet used
		content io.Reader
		ended   bool
		n       int
		missed  = -1
	)
	errMissed := errors.New("missed")
	var nf newFolders
	err = p.store.eachOp(func(i int, op *restoreOp) error {
		inside := nf.step(op)
		if !fetched(op) || op.entry.Src != src {
			return nil
		}
		if n++; n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		me := &op.entry
		for !ended && (at == nil || comparePaths(at.Path, me.Path) < 0) {
			at, content, err = as.next()
			if err == io.EOF {
				ended = true
			} else if as.disordered {
				break
			} else if err != nil {
				return err
			}
		}
		if ended || as.disordered || at.Path != me.Path || content == nil {
			missed = i
			return errMissed
		}
		ae := at
		at = nil
		return p.stageChecked(src, me, ae, content, rules, stagedAt(i, op, inside))
	})
	if err != errMissed {
		return err
	}
	want := map[string]need{}
	nf = newFolders{}
	err = p.store.eachOp(func(i int, op *restoreOp) error {
		inside := nf.step(op)
		if fetched(op) && op.entry.Src == src && i >= missed {
			want[op.entry.Path] = need{i, op.entry, stagedAt(i, op, inside)}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return p.stageFromWhole(ctx, src, want, limits, rules)
}

// need is a file the plan fetches: its operation's number, its entry, and
// where it is staged.
type need struct {
	op   int
	e    Entry
	name string // where it is staged (see stagedAt)
}

// stageFromWhole reads one archive from start to end and stages the files
// want names, checking each against its manifest entry.
func (p *restorePlan) stageFromWhole(ctx context.Context, src string, want map[string]need, limits Limits, rules *snapshotRules) error {
	as, err := openArchive(src, limits, Folding{})
	if err != nil {
		return err
	}
	defer as.Close()
	for len(want) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, content, err := as.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		n, ok := want[e.Path]
		if !ok || content == nil {
			continue
		}
		delete(want, e.Path)
		if err := p.stageChecked(src, &n.e, e, content, rules, n.name); err != nil {
			return err
		}
	}
	for name := range want {
		return &ArchiveError{Archive: src, Entry: name, Reason: "missing, though its manifest says it is here; the snapshot is damaged"}
	}
	return nil
}

// stageChecked stages the content of the manifest's entry me, read from
// the archive src as its entry ae, failing if its size or hash differ from
// me's.
func (p *restorePlan) stageChecked(src string, me, ae *Entry, content io.Reader, rules *snapshotRules, name string) error {
	if ae.Size != me.Size {
		return &ArchiveError{Archive: src, Entry: me.Path, Reason: "size differs from its manifest; the snapshot is damaged"}
	}
	r := io.Reader(&hashCheck{r: content, h: sha256.New(), want: me.Hash, e: me})
	if base := path.Base(me.Path); base == ".gitignore" || base == ".rewindignore" {
		rules.add(me.Path, &r)
	}
	return p.stageAs(me, r, name)
}

// keepInput leaves the snapshot's entry e at one of its own input files
// alone: the tree keeps the file being read. The entry still counts as in
// the snapshot, so the file is not deleted either. Where the snapshot has a
// folder, the restore is refused (see inputInTheWay).
func (p *restorePlan) keepInput(e *Entry) {
	name := e.Path
	if e.Kind == KindDir {
		p.inputInTheWay(name)
	}
	p.snapshot[name] = KindFile
	for _, d := range missingParents(name, p.snapshot) {
		p.snapshot[d] = KindDir
	}
	p.leftInputs = append(p.leftInputs, name)
}

// within returns the files of paths that lie inside root, relative to it
// (slash-separated), compared with symlinks resolved.
func within(root string, paths []string) map[string]bool {
	out := map[string]bool{}
	roots := resolvedForms(root)
	for _, f := range paths {
		for _, abs := range resolvedForms(f) {
			for _, r := range roots {
				if rel, err := filepath.Rel(r, abs); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
					out[filepath.ToSlash(rel)] = true
				}
			}
		}
	}
	return out
}

// missingParents lists the folders above name, outermost first, that the
// snapshot has not listed yet.
func missingParents(name string, snapshot map[string]Kind) []string {
	var out []string
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		if _, ok := snapshot[d]; ok {
			break
		}
		out = append(out, d)
	}
	slices.Reverse(out)
	return out
}

// checkNotInTheWay refuses to restore name when something out of scope
// (ignored, or special) occupies it or stands on its way, never looking
// through a symlink: a parent that is a symlink or file of the tree in scope
// gives way to the snapshot's folder, so nothing below it is in the way.
func (p *restorePlan) checkNotInTheWay(name string, c *Entry) error {
	if c != nil {
		return nil
	}
	if at, fi := p.occupant(name); fi != nil {
		if fi.IsDir() && isGitName(path.Base(at), p.fold) {
			return fmt.Errorf("cannot restore %s: %s is a repository's .git folder, which a restore never writes into or replaces; move it aside and retry", name, at)
		}
		return fmt.Errorf("cannot restore %s: an ignored %s is in the way (%s); move it aside (or un-ignore it) and retry", name, describeMode(fi.Mode()), at)
	}
	return nil
}

// occupant returns what stands at name, or on the way to it, that the
// tree in scope does not hold, without following a symlink; nil when
// nothing does, or when a parent in scope is not a folder (it will be
// replaced by one).
func (p *restorePlan) occupant(name string) (string, fs.FileInfo) {
	els := strings.Split(name, "/")
	for i := range els {
		at := strings.Join(els[:i+1], "/")
		if c := p.lookup(at); c != nil {
			if c.Kind != KindDir {
				return "", nil
			}
			continue
		}
		// Every folder above at is a real folder: Lstat follows no symlink.
		fi, err := p.r.Lstat(filepath.FromSlash(at))
		if err != nil {
			return "", nil
		}
		if i == len(els)-1 || !fi.IsDir() {
			return at, fi
		}
	}
	return "", nil
}

// ignoredDir reports whether an out-of-scope real folder stands at name.
func (p *restorePlan) ignoredDir(name string) bool {
	at, fi := p.occupant(name)
	return fi != nil && at == name && fi.IsDir()
}

// checkReplaceable refuses to replace the folder name by a file or symlink
// when it holds anything that is not in scope (ignored files), which a
// restore must never delete: its entries on disk are merged with the
// walk's (see replaceCheck), here or, in a plan over what differs, as the
// walk went through it.
func (p *restorePlan) checkReplaceable(name string) error {
	if rc := p.replaceChecked[name]; rc != nil {
		return rc.refusal()
	}
	rc := p.startReplaceCheck(name)
	i, found := slices.BinarySearchFunc(p.current, name, func(e Entry, name string) int { return comparePaths(e.Path, name) })
	if found {
		i++
	}
	for ; i < len(p.current) && strings.HasPrefix(p.current[i].Path, name+"/") && !rc.done(); i++ {
		p.replaceWalked(rc, &p.current[i])
	}
	rc.finish()
	return rc.refusal()
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "folder"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "special file"
}

// compareFile consumes a file entry's content, compares it with the tree's
// file c (if any), and stages it when it differs and stage is set: as
// name in the staging folder, or by the next number when name is "".
func (p *restorePlan) compareFile(e *Entry, c *Entry, content io.Reader, stage bool, name string, buf, buf2 []byte) (same bool, staged string, err error) {
	var cf *os.File
	if c != nil && c.Kind == KindFile {
		// (O_NONBLOCK: a FIFO put there since the walk does not hold the open up)
		cf, err = p.r.OpenFile(filepath.FromSlash(c.Path), os.O_RDONLY|oNonblock, 0)
		if err != nil && unreadableErr(err) {
			p.leaveUnreadable(e.Path) // it cannot be backed up, so it is not replaced
			_, err := io.Copy(io.Discard, content)
			return false, "", archiveReadErr(e, err)
		}
		if err != nil && !changed(err) {
			return false, "", fmt.Errorf("read %s: %w", e.Path, err)
		}
		if cf != nil && c.Size != e.Size {
			cf.Close()
			cf = nil
		}
	}
	if cf != nil {
		defer cf.Close()
		// Compare chunk by chunk; at the first difference, stage the equal
		// prefix (from the tree) and the rest (from the archive).
		var off int64
		for {
			n, rerr := io.ReadFull(content, buf)
			if n > 0 {
				m, _ := io.ReadFull(cf, buf2[:n])
				if m != n || !bytes.Equal(buf[:n], buf2[:n]) {
					if !stage {
						_, err := io.Copy(io.Discard, content)
						return false, "", archiveReadErr(e, err)
					}
					staged, err = p.stageFrom(e, io.MultiReader(io.NewSectionReader(cf, 0, off), bytes.NewReader(buf[:n]), content), name)
					return false, staged, err
				}
				off += int64(n)
			}
			if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
				if off != e.Size {
					return false, "", archiveReadErr(e, io.ErrUnexpectedEOF)
				}
				return true, "", nil
			}
			if rerr != nil {
				return false, "", archiveReadErr(e, rerr)
			}
		}
	}
	if !stage {
		_, err := io.Copy(io.Discard, content)
		return false, "", archiveReadErr(e, err)
	}
	staged, err = p.stageFrom(e, content, name)
	return false, staged, err
}

func archiveReadErr(e *Entry, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("archive truncated inside %s; the snapshot is incomplete, nothing was changed", e.Path)
	}
	return fmt.Errorf("archive corrupt inside %s (%v); nothing was changed", e.Path, err)
}

// openStage creates the staging folder with its marker (see isStaging),
// flock-held while the restore runs.
func (p *restorePlan) openStage() error {
	p.cleanStaleStages(".")
	for _, m := range p.mounts {
		p.cleanStaleStages(m.path)
	}
	name, marker := newStagingName()
	if err := p.r.Mkdir(name, 0o700); err != nil {
		return fmt.Errorf("create staging folder in %s: %w", p.root, err)
	}
	p.stage, p.marker = name, marker
	lf, err := p.r.OpenFile(name+"/"+stagingMarker, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("create staging folder in %s: %w", p.root, err)
	}
	p.stageLock = lf
	if err := durable.TryLock(lf); err != nil {
		return fmt.Errorf("lock staging folder %s: %w", name, err)
	}
	if _, err := lf.Write(marker); err != nil {
		return fmt.Errorf("create staging folder in %s: %w", p.root, err)
	}
	return nil
}

// cleanStaleStages removes the staging folders killed restores left behind
// in the folder dir (the root, ".", or a mount's top, relative to it):
// those proven to be staging folders (isStaging) whose lock no process
// holds. Nothing else is removed, whatever its name.
func (p *restorePlan) cleanStaleStages(dir string) {
	abs := filepath.Join(p.root, filepath.FromSlash(dir))
	des, err := os.ReadDir(abs)
	if err != nil {
		return
	}
	for _, de := range des {
		if !stagingEntry(abs, de.Name(), de.Type()) {
			continue
		}
		name := filepath.Join(filepath.FromSlash(dir), de.Name())
		lf, err := p.r.OpenFile(filepath.Join(name, stagingMarker), os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			p.r.Remove(name) // empty: killed right after creating it
			continue
		}
		if err != nil {
			continue
		}
		held := durable.TryLock(lf) != nil
		lf.Close()
		if !held { // else a live restore is using it
			p.r.RemoveAll(name)
		}
	}
}

func (p *restorePlan) nextStaged() string {
	p.nstaged++
	return strconv.Itoa(p.nstaged)
}

func (p *restorePlan) stageFrom(e *Entry, r io.Reader, name string) (string, error) {
	if name == "" {
		name = p.nextStaged()
	}
	return name, p.stageAs(e, r, name)
}

// stageAs writes e's content, read from r, into the staging folder as name
// (a path there: its folders are made as needed).
func (p *restorePlan) stageAs(e *Entry, r io.Reader, name string) error {
	stage, err := p.stageFor(e.Path)
	if err != nil {
		return err
	}
	if isGitName(path.Base(e.Path), p.fold) {
		if r, err = p.checkGitFile(e, r, p.archive); err != nil {
			return err
		}
	}
	if dir := path.Dir(name); dir != "." && (dir != p.stagedDir || stage != p.stagedOn) {
		if err := p.r.MkdirAll(stage+"/"+dir, 0o700); err != nil {
			return fmt.Errorf("stage %s: %w", e.Path, err)
		}
		p.stagedDir, p.stagedOn = dir, stage
	}
	f, err := p.r.OpenFile(stage+"/"+name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("stage %s: %w", e.Path, err)
	}
	n, rerr, werr := copySparse(f, ctxio.Reader{Ctx: p.ctx, R: r})
	if werr != nil {
		f.Close()
		return fmt.Errorf("stage %s in %s: %w", e.Path, p.root, werr)
	}
	if rerr != nil {
		f.Close()
		if p.ctx.Err() != nil {
			return p.ctx.Err()
		}
		return archiveReadErr(e, rerr)
	}
	if n != e.Size {
		f.Close()
		return archiveReadErr(e, io.ErrUnexpectedEOF)
	}
	p.progress.Add(1, n)
	if err := f.Chmod(e.Mode); err != nil {
		f.Close()
		return fmt.Errorf("stage %s: %w", e.Path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("stage %s in %s: %w", e.Path, p.root, err)
	}
	return nil
}

// holeBlock is the unit copySparse skips when it is all zeros: a file
// system block.
const holeBlock = 4096

var zeroBlock [holeBlock]byte

// copySparse copies r to the new, empty file f, seeking over every block of
// zeros instead of writing it, so a sparse file keeps its holes (and a file
// of zeros gets some: the content is the same). It returns the bytes
// copied, and the error reading r or writing f.
func copySparse(f *os.File, r io.Reader) (n int64, rerr, werr error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	hole := false // the last block was skipped
	for {
		m, err := io.ReadFull(r, buf)
		// The blocks between holes are written in one call each.
		start := 0
		for i := 0; i < m; i += holeBlock {
			end := min(i+holeBlock, m)
			if hole = end-i == holeBlock && bytes.Equal(buf[i:end], zeroBlock[:]); !hole {
				continue
			}
			if start < i {
				if _, werr := f.WriteAt(buf[start:i], n+int64(start)); werr != nil {
					return n + int64(start), nil, werr
				}
			}
			start = end
		}
		if start < m {
			if _, werr := f.WriteAt(buf[start:m], n+int64(start)); werr != nil {
				return n + int64(start), nil, werr
			}
		}
		n += int64(m)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return n, err, nil
		}
	}
	// A file that ends in a hole has its size set by the truncate (only
	// such a file: a truncate is a metadata change of its own, costly a
	// million times over).
	if hole {
		if err := f.Truncate(n); err != nil {
			return n, nil, err
		}
	}
	return n, nil, nil
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

func (p *restorePlan) close() {
	if p.store != nil {
		p.store.close()
		p.spill, p.store = nil, nil
	}
	p.closeMountStages()
	if p.stage != "" {
		p.r.RemoveAll(p.stage)
		p.stage = ""
	}
	if p.stageLock != nil {
		p.stageLock.Close()
		p.stageLock = nil
	}
	p.r.Close()
}

func (p *restorePlan) result(dry, brief bool) (*RestoreResult, error) {
	res := &RestoreResult{Type: "restore", DryRun: dry, Unchanged: p.unchanged, LeftIgnored: p.leftIgnored, Inputs: p.leftInputs}
	for u := range p.leftUnreadable {
		res.Unreadable = append(res.Unreadable, u)
	}
	sort.Strings(res.Unreadable)
	n := p.store.counts()
	res.Written, res.ModeChanged, res.Folders = n.written, n.modes, n.folders
	// Renames are listed after a restore too: a person looking for the
	// tree's spelling needs to be told where it went.
	res.Renamed, res.RenamedList = len(n.renamed), n.renamed
	d := p.store.takeDeleted()
	res.Deleted, res.DeletedList = d.n, d.names
	res.Folders += d.folders
	if dry && !brief { // what a dry run would write, and change the mode of
		if err := p.store.eachOp(func(_ int, op *restoreOp) error {
			switch op.kind {
			case opWrite:
				res.WrittenList.addTuned(op.entry.Path, p.listHeld, p.tempDir)
			case opMkdir:
				res.WrittenList.addTuned(op.entry.Path+"/", p.listHeld, p.tempDir)
			case opChmod:
				res.ModeList.addTuned(op.entry.Path, p.listHeld, p.tempDir)
			}
			return nil
		}); err != nil {
			res.Close()
			return nil, err
		}
	}
	if err := errors.Join(res.WrittenList.Err(), res.DeletedList.Err(), res.ModeList.Err()); err != nil {
		res.Close()
		return nil, err
	}
	return res, nil
}

// deletions lists what a restore deletes, after it too: it is what a person
// needs named. They are added in walk order, and a folder deleted is listed
// once for all it held (its path ending in "/", as rm -r is told: a tree
// emptied lists its top folders, not a million files); what it holds that
// is left alone is listed as such (unreadable, ignored, the snapshot's own
// files). A restore limited to paths lists each path: a folder there may
// hold paths left out of them.
type deletions struct {
	each    bool
	n       int // files
	folders int
	names   PathList
	top     string // the last folder listed, with its "/"
	most    int    // the PathList's tuning (see addTuned)
	dir     string
}

func (d *deletions) add(e *Entry) {
	if e.Kind == KindDir {
		d.folders++
	} else {
		d.n++
	}
	if d.top != "" && strings.HasPrefix(e.Path, d.top) {
		return
	}
	name := e.Path
	if e.Kind == KindDir {
		name += "/"
		if !d.each {
			d.top = name
		}
	}
	d.names.addTuned(name, d.most, d.dir)
}

// opChanges is the changes the operations make, as a diff lists them (not
// sorted).
func opChanges(ops []restoreOp) []Change {
	var out []Change
	other := map[string]bool{} // paths with a change besides their spelling's, which says both
	for _, op := range ops {
		if op.kind != opRename {
			other[op.entry.Path] = true
		}
	}
	for _, op := range ops {
		if op.kind == opRename && other[op.entry.Path] {
			continue
		}
		c := Change{Type: "change", Path: op.entry.Path, Kind: op.entry.Kind.String(), TreePath: op.from}
		switch {
		case op.kind == opRename:
			c.Op = OpRenamed
		case op.kind == opChmod:
			c.Op = OpMode
		case !op.existed:
			c.Op = OpDeleted // in the snapshot, not in the tree
		default:
			c.Op = OpModified
		}
		out = append(out, c)
	}
	return out
}
