package snap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"rewind.dev/internal/durable"
)

// A mount is a file system mounted inside the tree: a tmpfs at build/, a
// disk, a bind mount of another folder. The walk goes into it, as git
// lists what is there, so a snapshot holds what the tree holds whatever
// file system holds it. A rename cannot cross from one file system to
// another, so a restore stages what it writes on the file system it goes
// to: in the root's staging folder, or in one of the same name at the top
// of the mount (see stageFor). Before it changes anything it refuses what
// no staging can do (MountError): a change on a read-only mount, or on one
// that takes no staging folder, and the deletion or replacement of a mount
// point itself.
type mount struct {
	path     string // the mount point, relative to the root, slash-separated
	readOnly bool
}

// mountsIn lists the mounts strictly inside root, outermost first (in walk
// order), as the system tells them (systemMounts).
func mountsIn(root string) []mount {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil
	}
	ms := systemMounts(real)
	// The last listed at a path is the one mounted over the others.
	slices.SortStableFunc(ms, func(a, b mount) int { return comparePaths(a.path, b.path) })
	for i := len(ms) - 1; i > 0; i-- {
		if ms[i-1].path == ms[i].path {
			ms = slices.Delete(ms, i-1, i)
		}
	}
	return ms
}

// relUnder returns point (an absolute path) relative to the folder real,
// when it lies strictly below it.
func relUnder(real, point string) (string, bool) {
	prefix := real
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	rel, ok := strings.CutPrefix(point, prefix)
	return rel, ok && rel != ""
}

// MountError is a restore refused, before it changed anything, because of a
// file system mounted inside the tree at Mount: Path, which the restore
// would change, is the mount point itself (a restore neither deletes nor
// replaces one), or lies on a mount that is read-only or takes no staging
// folder (Err says why).
type MountError struct {
	Path, Mount string
	ReadOnly    bool
	Err         error
}

func (e *MountError) Error() string {
	switch {
	case e.Path == e.Mount:
		return fmt.Sprintf("cannot restore %s: a file system is mounted there, and a restore never deletes or replaces a mount point; nothing was changed", e.Path)
	case e.ReadOnly:
		return fmt.Sprintf("cannot restore %s: the file system mounted at %s is read-only; nothing was changed", e.Path, e.Mount)
	}
	return fmt.Sprintf("cannot restore %s: the file system mounted at %s takes no staging folder (%v); nothing was changed", e.Path, e.Mount, e.Err)
}

func (e *MountError) Unwrap() error { return e.Err }

// mountStage is a mount inside the root, and the restore's staging folder
// on it.
type mountStage struct {
	mount
	key   string   // path's fold key and a final "/": what paths inside it start with
	stage string   // its staging folder, relative to the root; "" until made
	lock  *os.File // its marker, flock-held
	err   error    // why no staging folder could be made there
}

// findMounts lists the mounts inside the root (see mount), but for those
// in Rewind's store and the state folders, which a restore never touches
// (a store mounted read-only, say).
func (p *restorePlan) findMounts() {
	for _, m := range mountsIn(p.root) {
		if !underAny(m.path, p.state) && !strings.Contains("/"+m.path+"/", "/"+storeFolder+"/") {
			p.mounts = append(p.mounts, &mountStage{mount: m, key: p.fold.Key(m.path) + "/"})
		}
	}
}

// mountOf returns the innermost mount that name (a path of the tree or the
// snapshot) lies inside, below its mount point; nil for the root's file
// system.
func (p *restorePlan) mountOf(name string) *mountStage {
	if len(p.mounts) == 0 {
		return nil
	}
	key := p.fold.Key(name)
	for i := len(p.mounts) - 1; i >= 0; i-- {
		if strings.HasPrefix(key, p.mounts[i].key) {
			return p.mounts[i]
		}
	}
	return nil
}

// mountAt returns the mount whose mount point is name; nil when none is.
func (p *restorePlan) mountAt(name string) *mountStage {
	if len(p.mounts) == 0 {
		return nil
	}
	key := p.fold.Key(name) + "/"
	for _, m := range p.mounts {
		if m.key == key {
			return m
		}
	}
	return nil
}

// stageFor returns the staging folder (relative to the root) for the entry
// at name: the root's, or, inside a mount, the one at the mount's top,
// made on first use.
func (p *restorePlan) stageFor(name string) (string, error) {
	m := p.mountOf(name)
	if m == nil {
		return p.stage, nil
	}
	if err := p.openMountStage(m, name); err != nil {
		return "", err
	}
	return m.stage, nil
}

// stagedIn returns the staging folder the entry at name was staged in.
func (p *restorePlan) stagedIn(name string) string {
	if m := p.mountOf(name); m != nil && m.stage != "" {
		return m.stage
	}
	return p.stage
}

// openMountStage makes the staging folder on the mount m, named as the
// root's, with its marker (see isStaging) flock-held (openStage removed
// those killed restores left there). name is the path the restore would
// change there, for the error.
func (p *restorePlan) openMountStage(m *mountStage, name string) error {
	switch {
	case m.stage != "":
		return nil
	case m.readOnly:
		return &MountError{Path: name, Mount: m.path, ReadOnly: true}
	case m.err != nil:
		return &MountError{Path: name, Mount: m.path, Err: m.err}
	}
	at := m.path + "/" + p.stage
	if err := p.r.Mkdir(filepath.FromSlash(at), 0o700); err != nil {
		m.err = err
		if errors.Is(err, syscall.EROFS) {
			return &MountError{Path: name, Mount: m.path, ReadOnly: true}
		}
		return &MountError{Path: name, Mount: m.path, Err: err}
	}
	m.stage = at
	lf, err := p.r.OpenFile(filepath.FromSlash(at+"/"+stagingMarker), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err == nil {
		m.lock = lf
		if err = durable.TryLock(lf); err == nil {
			_, err = lf.Write(p.marker)
		}
	}
	if err != nil {
		m.err = err
		return &MountError{Path: name, Mount: m.path, Err: err}
	}
	return nil
}

// closeMountStages removes the staging folders made on mounts.
func (p *restorePlan) closeMountStages() {
	for _, m := range p.mounts {
		if m.stage != "" {
			p.r.RemoveAll(filepath.FromSlash(m.stage))
			m.stage = ""
		}
		if m.lock != nil {
			m.lock.Close()
			m.lock = nil
		}
	}
}

// checkMounts refuses, before anything changes, a plan that would delete or
// replace a mount point, or change anything on a mount it cannot stage on
// (read-only, or taking no staging folder: one is made on each mount the
// plan changes, if staging did not make it already). A tree without mounts
// costs nothing.
func (p *restorePlan) checkMounts(stage bool) error {
	if len(p.mounts) == 0 {
		return nil
	}
	touch := func(name string, replaced bool) error {
		if m := p.mountAt(name); m != nil {
			if replaced {
				return &MountError{Path: name, Mount: m.path}
			}
			if err := p.touchMount(m, name, stage); err != nil { // (its top's mode changes)
				return err
			}
		}
		if m := p.mountOf(name); m != nil {
			return p.touchMount(m, name, stage)
		}
		return nil
	}
	err := p.store.eachOp(func(_ int, op *restoreOp) error {
		switch op.kind {
		case opRename:
			if err := touch(op.from, true); err != nil {
				return err
			}
			return touch(op.entry.Path, true)
		case opChmod:
			return touch(op.entry.Path, false)
		}
		return touch(op.entry.Path, op.existed)
	})
	if err != nil {
		return err
	}
	return p.store.eachDelete(func(d *Entry, _ bool) error { return touch(d.Path, true) })
}

// touchMount checks that the plan may change name on the mount m: that it
// is not read-only, and, when the restore stages, that it takes a staging
// folder.
func (p *restorePlan) touchMount(m *mountStage, name string, stage bool) error {
	if !stage {
		if m.readOnly {
			return &MountError{Path: name, Mount: m.path, ReadOnly: true}
		}
		return nil
	}
	return p.openMountStage(m, name)
}
