package snap

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// A folder of the tree that the snapshot replaces by a file or symlink is
// deleted with all it holds, which a restore must check first: nothing in
// it may be what the walk leaves out (an ignored file: see
// checkReplaceable), and, in a restore limited to paths, nothing in it may
// be outside them (see checkSelection); and nothing in it may be a path the
// restore leaves alone (see leftInReplaced), or the folder could not go and
// the restore would stop half way. A plan over what differs (see
// sparseOver) checks it as the walk goes through the folder, merging the
// folder's entries on disk, listed in walk order, with those the walk
// hands on: memory holds a listing per level, not the folder, and a plan
// written out in blocks may cut one inside it.

// replaceCheck is that look at one folder.
type replaceCheck struct {
	dir     string
	levels  [][]dirName // each level's entries on disk not yet met, in walk order
	extra   []string    // on disk, left out of the walk (the first three)
	outside string      // the first entry outside the paths restored
	err     error       // a folder in it could not be listed
}

type dirName struct {
	path  string
	isDir bool
}

// replaceCheckMost is how many entries left out of the walk a check names.
const replaceCheckMost = 3

// startReplaceCheck begins the check of the tree's folder dir, which the
// walk has just handed on.
func (p *restorePlan) startReplaceCheck(dir string) *replaceCheck {
	rc := &replaceCheck{dir: dir}
	p.descend(rc, dir)
	return rc
}

// descend lists the folder dir on disk as the next level of rc.
func (p *restorePlan) descend(rc *replaceCheck, dir string) {
	f, err := p.r.Open(filepath.FromSlash(dir))
	if err != nil {
		rc.err = err
		return
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		rc.err = err
		return
	}
	level := make([]dirName, len(des))
	for i, de := range des {
		level[i] = dirName{dir + "/" + de.Name(), de.IsDir()}
	}
	slices.SortFunc(level, func(a, b dirName) int { return comparePaths(a.path, b.path) })
	rc.levels = append(rc.levels, level)
}

// done reports whether the check has found enough to refuse the folder.
func (rc *replaceCheck) done() bool {
	return rc.err != nil || len(rc.extra) >= replaceCheckMost
}

// next returns the first entry on disk not yet met, or nil.
func (rc *replaceCheck) next() *dirName {
	for len(rc.levels) > 0 {
		if l := rc.levels[len(rc.levels)-1]; len(l) > 0 {
			return &l[0]
		}
		rc.levels = rc.levels[:len(rc.levels)-1]
	}
	return nil
}

func (rc *replaceCheck) pop() {
	l := &rc.levels[len(rc.levels)-1]
	*l = (*l)[1:]
}

// replaceWalked takes the walk's entry c, inside the folder: what comes
// before it on disk was left out of the walk.
func (p *restorePlan) replaceWalked(rc *replaceCheck, c *Entry) {
	if rc.outside == "" && p.paths != nil && !p.paths.Match(p.snapName(c.Path), c.Kind == KindDir) {
		rc.outside = c.Path
	}
	for !rc.done() {
		d := rc.next()
		if d == nil {
			return // (gone from disk since: deleted all the same)
		}
		switch cmp := comparePaths(d.path, c.Path); {
		case cmp < 0:
			rc.extra = append(rc.extra, d.path)
			rc.pop()
		case cmp == 0:
			isDir := d.isDir
			rc.pop()
			if isDir && c.Kind == KindDir {
				p.descend(rc, c.Path)
			}
			return
		default:
			return // (not on disk now)
		}
	}
}

// finish ends the check once the walk is past the folder: what is left on
// disk was left out of the walk.
func (rc *replaceCheck) finish() {
	for !rc.done() {
		d := rc.next()
		if d == nil {
			break
		}
		rc.extra = append(rc.extra, d.path)
		rc.pop()
	}
	rc.levels = nil
}

// refusal is checkReplaceable's error for the folder, or nil.
func (rc *replaceCheck) refusal() error {
	if rc.err != nil {
		return fmt.Errorf("cannot restore %s: %w", rc.dir, rc.err)
	}
	if len(rc.extra) > 0 {
		return fmt.Errorf("cannot restore %s as a file: the folder there holds ignored files (%s); move them away and retry", rc.dir, strings.Join(rc.extra, ", "))
	}
	return nil
}

// LeftAloneError is a restore that would have to delete a folder of the
// tree, which the snapshot replaces by a file or symlink, that holds a path
// the restore leaves alone: the folder could not go, and the restore would
// stop half way. It is refused while planning, before anything changes.
//
// The same holds where the snapshot has a folder at the path left alone
// itself, one of its own files: then Folder is "".
type LeftAloneError struct {
	Folder string // the folder the snapshot replaces, as the tree spells it
	Path   string // the path in it left alone
	Reason string // why it is left alone: "input", "unreadable" or "ignored"
}

func (e *LeftAloneError) Error() string {
	if e.Folder == "" {
		return fmt.Sprintf("cannot restore %s: the snapshot has a folder there, and the tree's %s is the snapshot's own archive or manifest, which the restore reads; move it out of the tree, or restore into another folder", e.Path, e.Path)
	}
	switch e.Reason {
	case "input":
		return fmt.Sprintf("cannot restore %s: the folder there holds %s, the snapshot's own archive or manifest, which the restore reads; move it out of %s, or restore into another folder", e.Folder, e.Path, e.Folder)
	case "unreadable":
		return fmt.Sprintf("cannot restore %s: the folder there holds %s, which cannot be read, so no backup could hold it; make it readable or move it out of %s, and retry", e.Folder, e.Path, e.Folder)
	}
	return fmt.Sprintf("cannot restore %s: the folder there holds %s, ignored under the snapshot's rules; move it out of %s and retry", e.Folder, e.Path, e.Folder)
}

// leftInReplaced follows the tree's entries in walk order as the plan
// decides whether each is deleted (c, deleted), and notes the first folder
// the snapshot replaces (inSnap) that holds a path left alone, in
// p.leftAlone: open holds the folders replaced that the walk is in. A
// path outside the paths restored is checkSelection's to refuse.
func (p *restorePlan) leftInReplaced(open *[]string, c *Entry, inSnap, deleted bool) {
	for len(*open) > 0 && !strings.HasPrefix(c.Path, (*open)[len(*open)-1]+"/") {
		*open = (*open)[:len(*open)-1]
	}
	if deleted {
		if inSnap && c.Kind == KindDir {
			*open = append(*open, c.Path)
		}
		return
	}
	if len(*open) == 0 || p.leftAlone != nil || !p.paths.Match(p.snapName(c.Path), c.Kind == KindDir) {
		return
	}
	reason := ""
	switch {
	case p.isLeftUnreadable(c.Path):
		reason = "unreadable"
	case p.isInput(c.Path):
		reason = "input"
	case len(p.leftIgnored) > 0 && p.leftIgnored[len(p.leftIgnored)-1] == c.Path:
		reason = "ignored"
	default:
		return
	}
	p.leftAlone = &LeftAloneError{Folder: (*open)[0], Path: c.Path, Reason: reason}
}
