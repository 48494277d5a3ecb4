package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/gitdir"
	"rewind.dev/internal/layout"
)

// A global-mode store lives in Rewind's home (storage/<id>/), outside the work tree, so that
// nothing an agent or a build script runs in the project (git clean -fdx, git stash --all,
// rm -rf) takes the checkpoints with it. Three records lead a project to it (see
// layout.FindStore): the store's own `project` file (where its project was last seen), the
// project index (the path's hash → the id: a folder deleted and made again at the same path
// finds its checkpoints) and, in a git work tree, a mark in the repository's git directory
// (layout.GitMark: it moves with the repository, and a clone has none, so a moved project
// finds its store and two clones of one repository never share one).

// storeID is the id the records name the store by: its folder's name.
func (s *Store) storeID() string { return filepath.Base(s.Dir) }

// recordGlobal writes the records that lead s.Project to s: its project file, and those
// outside it (recordPaths).
func (s *Store) recordGlobal() error {
	if b, _ := os.ReadFile(s.path(layout.ProjectFile)); string(bytes.TrimSpace(b)) != s.Project {
		if err := durable.WriteFile(s.path(layout.ProjectFile), []byte(s.Project+"\n"), layout.FileMode); err != nil {
			return fmt.Errorf("record the project of store %s: %w", s.Dir, err)
		}
	}
	return s.recordPaths()
}

// recordPaths writes the records outside the store that lead s.Project to it: the project
// index entry and, when the project is a repository's top, the repository's mark.
func (s *Store) recordPaths() error {
	home := s.Homes.Rewind
	id := s.storeID()
	if idx := layout.ProjectIndex(home, s.Project); layout.ReadStoreID(idx) != id {
		if err := os.MkdirAll(filepath.Dir(idx), layout.DirMode); err != nil {
			return fmt.Errorf("record the store of %s: %w", s.Project, err)
		}
		if err := durable.WriteFile(idx, []byte(id+"\n"), layout.FileMode); err != nil {
			return fmt.Errorf("record the store of %s: %w", s.Project, err)
		}
	}
	if gd := gitdir.Of(s.Project); gd != "" && layout.ReadStoreID(filepath.Join(gd, layout.GitMark)) != id {
		// (A repository the user cannot write into still finds its store by its path.)
		durable.WriteFile(filepath.Join(gd, layout.GitMark), []byte(id+"\n"), layout.FileMode)
	}
	return nil
}

// follow brings a global store's records up to date when its project was found somewhere else
// than where it was last seen (a repository moved, or a folder made again at the path): the
// project file and the index name the new place, and the old place's entry is dropped when it
// still names this store, so that a new project there starts a store of its own.
func (s *Store) follow() error {
	recorded, err := os.ReadFile(s.path(layout.ProjectFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("open store %s: %w", s.Dir, err)
	}
	old := string(bytes.TrimSpace(recorded))
	home := s.Homes.Rewind
	marked := true
	if gd := gitdir.Of(s.Project); gd != "" {
		marked = layout.ReadStoreID(filepath.Join(gd, layout.GitMark)) == s.storeID()
	}
	if old == s.Project && marked && layout.ReadStoreID(layout.ProjectIndex(home, s.Project)) == s.storeID() {
		return nil
	}
	if err := s.recordGlobal(); err != nil {
		return err
	}
	if old != "" && old != s.Project {
		if idx := layout.ProjectIndex(home, old); layout.ReadStoreID(idx) == s.storeID() {
			os.Remove(idx)
		}
	}
	return nil
}

// Attach makes the global store recorded for a project that was at old the store of project: a
// project moved to another folder that is no repository (a repository's mark finds its store
// by itself). project must have no store of its own. It uses the homes the
// environment names (EnvHomes).
func Attach(project, old string) (*Store, error) { return EnvHomes().Attach(project, old) }

// Attach is the package's Attach in the homes h.
func (h Homes) Attach(project, old string) (*Store, error) {
	abs, err := filepath.Abs(project)
	if err != nil {
		return nil, err
	}
	if old, err = filepath.Abs(old); err != nil {
		return nil, err
	}
	home := h.Rewind
	if dir, _, ok := layout.FindStore(home, abs); ok {
		return nil, fmt.Errorf("%s has a store already (%s)", abs, dir)
	}
	id := layout.ReadStoreID(layout.ProjectIndex(home, old))
	dir := layout.GlobalStore(home, id)
	if id == "" || !isDir(dir) {
		// (A store made before stores had ids: under the hash of the old path.)
		if d, mode, ok := layout.FindStore(home, old); ok && mode == layout.ModeGlobal {
			dir = d
		} else {
			return nil, fmt.Errorf("%w: no global store is recorded for %s", ErrNoStore, old)
		}
	}
	s := &Store{Dir: dir, Project: abs, Mode: layout.ModeGlobal, Homes: h}
	if err := s.trust(); err != nil {
		return nil, err
	}
	if err := s.follow(); err != nil {
		return nil, err
	}
	return s, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
