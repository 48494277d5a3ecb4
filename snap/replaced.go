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
// be outside them (see checkSelection). A plan over what differs (see
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
