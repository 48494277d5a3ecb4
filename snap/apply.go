package snap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// apply carries out the plan: renames to the snapshot's spelling (on a file
// system that folds names), deletions (deepest first), new folders
// (shallowest first; one the fetched files were staged in is renamed into
// place whole, see newFolders), staged files and links renamed into place,
// then mode changes. Every parent of a path written is checked to be a real folder,
// so an existing symlink never redirects a write. Folder modes are set
// last, deepest first: a folder the snapshot holds read-only is filled
// before it becomes so, and a read-only folder of the tree is opened for the
// owner while its entries change, then given its mode back. It is not
// interrupted: stopping half way would leave a tree half restored, and
// renames of staged files are quick. kept is the folders not in the
// snapshot kept because they hold ignored files.
func (p *restorePlan) apply() (kept []string, err error) {
	a := &applying{r: p.r, store: p.store, stagedIn: p.stagedIn, final: map[string]fs.FileMode{}, opened: map[string]bool{}}
	err = a.renames()
	if err == nil {
		err = a.deletes()
	}
	if err == nil {
		err = a.writes()
	}
	if err == nil {
		err = a.folderModes()
	}
	return a.kept, err
}

// applying is a plan being carried out: what it needs of the plan (the
// tree's root, the store of its operations and deletions, and where each
// file was staged), and the folders' modes it changes as it goes.
type applying struct {
	r        *os.Root
	store    planStore
	stagedIn func(name string) string // the staging folder the entry at name was staged in
	final    map[string]fs.FileMode   // folder -> the mode it ends with
	opened   map[string]bool          // folders known to be writable now
	kept     []string                 // folders not in the snapshot kept: they hold ignored files
}

// writable opens the folder name is in for its owner, if need be, to be
// given its mode back at the end (see folderModes).
func (a *applying) writable(name string) error {
	dir := path.Dir(name)
	if dir == "." || a.opened[dir] {
		return nil
	}
	a.opened[dir] = true
	fi, err := a.r.Lstat(filepath.FromSlash(dir))
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o300 == 0o300 {
		return nil
	}
	if _, ok := a.final[dir]; !ok {
		a.final[dir] = fi.Mode().Perm()
	}
	return a.r.Chmod(filepath.FromSlash(dir), fi.Mode().Perm()|0o700)
}

// renames gives the tree's entries the snapshot's spelling. The operations
// are read for them only where there are some.
func (a *applying) renames() error {
	if len(a.store.counts().renamed) == 0 {
		return nil
	}
	return a.store.eachOp(func(_ int, op *restoreOp) error {
		if op.kind != opRename {
			return nil
		}
		// Spelt either way, the path leads to the same file: the one
		// renamed, or the folder above it renamed before.
		if err := a.writable(op.entry.Path); err != nil {
			return fmt.Errorf("rename %s: %w", op.from, err)
		}
		if err := a.r.Rename(filepath.FromSlash(op.from), filepath.FromSlash(op.entry.Path)); err != nil {
			return fmt.Errorf("rename %s to %s: %w", op.from, op.entry.Path, err)
		}
		return nil
	})
}

// deletes deletes what the plan deletes, deepest first: a folder once the
// entries in it are (they follow it in walk order, the deletions' order).
func (a *applying) deletes() error {
	type folder struct {
		path   string
		inSnap bool
	}
	var folders []folder
	leaveFor := func(name string) error {
		for len(folders) > 0 {
			d := folders[len(folders)-1]
			if name != "" && strings.HasPrefix(name, d.path+"/") {
				return nil
			}
			folders = folders[:len(folders)-1]
			if err := a.writable(d.path); err != nil {
				return fmt.Errorf("remove %s: %w", d.path, err)
			}
			if err := a.r.Remove(filepath.FromSlash(d.path)); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if d.inSnap || !isNotEmpty(err) {
					return fmt.Errorf("remove folder %s: %w", d.path, err)
				}
				a.kept = append(a.kept, d.path) // holds ignored files: kept
			}
			delete(a.final, d.path)
			delete(a.opened, d.path)
		}
		return nil
	}
	err := a.store.eachDelete(func(d *Entry, inSnap bool) error {
		if err := leaveFor(d.Path); err != nil {
			return err
		}
		if d.Kind == KindDir {
			folders = append(folders, folder{d.Path, inSnap})
			return nil
		}
		if err := a.writable(d.Path); err != nil {
			return fmt.Errorf("remove %s: %w", d.Path, err)
		}
		if err := a.r.Remove(filepath.FromSlash(d.Path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", d.Path, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return leaveFor("")
}

// writes makes the new folders, renames staged files and links into
// place, and changes files' modes; a folder's mode is set at the end.
func (a *applying) writes() error {
	checked := map[string]bool{".": true}
	var nf newFolders
	return a.store.eachOp(func(i int, op *restoreOp) error {
		inside := nf.step(op)
		if op.kind == opRename {
			return nil // done first
		}
		if inside && (fetched(op) || op.staged == inStagedTree(op.entry.Path)) {
			return nil // staged in place: moved in with the new folder above it
		}
		if err := a.checkParents(op.entry.Path, checked); err != nil {
			return err
		}
		name := filepath.FromSlash(op.entry.Path)
		if op.kind != opChmod {
			if err := a.writable(op.entry.Path); err != nil {
				return fmt.Errorf("write %s: %w", op.entry.Path, err)
			}
		}
		switch {
		case op.kind == opMkdir:
			if err := a.mkdirStaged(op.entry.Path, inside); err != nil {
				return fmt.Errorf("create folder %s: %w", op.entry.Path, err)
			}
			a.final[op.entry.Path] = op.entry.Mode
			a.opened[op.entry.Path] = true
			checked[op.entry.Path] = true
		case op.kind == opWrite:
			staged := op.staged
			if staged == "" {
				staged = stagedAt(i, op, inside)
			}
			if err := a.r.Rename(a.stagedIn(op.entry.Path)+"/"+staged, name); err != nil {
				return fmt.Errorf("write %s: %w", op.entry.Path, err)
			}
		case op.entry.Kind == KindDir:
			a.final[op.entry.Path] = op.entry.Mode
		default:
			if err := a.r.Chmod(name, op.entry.Mode); err != nil {
				return fmt.Errorf("chmod %s: %w", op.entry.Path, err)
			}
		}
		return nil
	})
}

// folderModes gives the folders their final modes, deepest first: Mkdir
// applied the umask and a read-only folder was opened, and the snapshot's
// (or the tree's own) bits win.
func (a *applying) folderModes() error {
	dirs := make([]string, 0, len(a.final))
	for d := range a.final {
		dirs = append(dirs, d)
	}
	sort.Slice(dirs, func(i, j int) bool { return comparePaths(dirs[i], dirs[j]) > 0 })
	for _, d := range dirs {
		if err := a.r.Chmod(filepath.FromSlash(d), a.final[d]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("chmod %s: %w", d, err)
		}
	}
	return nil
}

// mkdirStaged creates the plan's new folder name: the one staged at its
// path, with the files fetched into it, moved in whole; one inside a folder
// moved in that way is there already unless it holds none of them. A
// name taken meanwhile is never replaced.
func (a *applying) mkdirStaged(name string, inside bool) error {
	at := filepath.FromSlash(name)
	if inside {
		if err := a.r.Mkdir(at, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	}
	staged := a.stagedIn(name) + "/" + inStagedTree(name)
	if _, err := a.r.Lstat(staged); err != nil {
		return a.r.Mkdir(at, 0o700)
	}
	if _, err := a.r.Lstat(at); !errors.Is(err, fs.ErrNotExist) {
		return fs.ErrExist
	}
	return a.r.Rename(staged, at)
}

// checkParents makes sure every folder above name is a real folder, not a
// symlink.
func (a *applying) checkParents(name string, checked map[string]bool) error {
	dir := path.Dir(name)
	if checked[dir] {
		return nil
	}
	if err := a.checkParents(dir, checked); err != nil {
		return err
	}
	fi, err := a.r.Lstat(filepath.FromSlash(dir))
	if err != nil {
		return fmt.Errorf("folder %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("cannot write under %s: it is a %s, not a folder; move it aside and retry", dir, describeMode(fi.Mode()))
	}
	checked[dir] = true
	return nil
}

func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
