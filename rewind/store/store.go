// Package store is Rewind's checkpoint store: checkpoints of a project's
// tree and its agent transcript, the session and hook state, the restore
// history, and every operation on them (save, restore, back, undo, gc,
// validate). All changes happen under an flock on the store's lock file;
// every file appears atomically.
//
// Its folder and files are described, once, by rewind.dev/internal/layout:
// config.json, session.json, hook-state.json, restore-history.json, the
// verified file, the lock, checkpoints/<id>/ (snapshot.tar.gz, manifest,
// transcript.jsonl.gz, metadata.json written last), layers/<id>.tar.gz,
// staging/ and transcript-backup/.
//
// A checkpoint's snapshot is usually a layer: only the files that changed
// since the previous checkpoint, over its chain (see rewind-snap(1)); its
// manifest lists the whole tree and where each file's content is. The
// archives live in layers/ so that deleting a checkpoint never moves an
// archive that newer checkpoints still read from.
package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/gitdir"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store/gc"
)

// ErrNoStore means the project has no store yet.
var ErrNoStore = errors.New("no checkpoint store for this project")

// Store is one project's checkpoint store.
type Store struct {
	Dir     string // the store folder
	Project string // the project root (absolute)
	Mode    layout.Mode
	// LockWait bounds the wait for the store's lock (see Lock).
	LockWait time.Duration
	// Waiting, when set, is told who holds the store's lock once Lock has
	// waited a second for it.
	Waiting func(holder string)
	// Now is the store's clock; nil is time.Now. A save names its
	// checkpoint by it, and the walks of the tree start by it: the scan's
	// start a manifest keeps, which decides which files are racy
	// (snap.WalkOptions.Now).
	Now func() time.Time
	// Homes are the folders outside the project the store uses (the
	// registry of the stores Rewind made, global storage, the global
	// config, the exports folder), as the constructor was given them.
	Homes Homes

	configOnce sync.Once
	config     *loadedConfig // read at the first Config or Limits

	// Set by tests to take over a small tree the paths of snap's that
	// only large trees take; zero is snap's production value.
	layerMost int // a layer save's entries at most (snap.CreateOptions.WithLayerMost)
	spillAt   int // a restore's plan's entries before it is made in blocks (snap.RestoreOptions.WithSpillAt)
	// Set by tests to split a small store's validate into runs.
	validatePart int // instead of minValidatePart
	validateRuns int // the most runs, instead of one per core (GOMAXPROCS)
}

// FindProject returns the project root for dir: the nearest folder (dir or
// above) that has a store, else the git work tree top, else dir itself. dir
// must be an existing folder. It is EnvHomes().FindProject.
func FindProject(dir string) (string, error) { return EnvHomes().FindProject(dir) }

// FindProject is the package's FindProject in the homes h.
func (h Homes) FindProject(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil {
		return "", &ProjectError{Path: abs, Err: err}
	} else if !fi.IsDir() {
		return "", &ProjectError{Path: abs}
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	if root, ok := layout.StoreRoot(h.Rewind, abs); ok {
		return root, nil
	}
	if out, err := exec.Command("git", "-C", abs, "rev-parse", "--show-toplevel").Output(); err == nil {
		if top := strings.TrimSpace(string(out)); top != "" {
			return top, nil
		}
	}
	return abs, nil
}

// TooBroad says why project is too broad a folder to hold a store — the
// file system's root, or the user's home folder: every checkpoint would
// hold everything under it — or "" when it is not. It is
// EnvHomes().TooBroad.
func TooBroad(project string) string { return EnvHomes().TooBroad(project) }

// TooBroad is the package's TooBroad for the user whose home is h.User.
func (h Homes) TooBroad(project string) string {
	abs, err := filepath.Abs(project)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	if abs == "/" {
		return "it is the root of the file system"
	}
	if home := h.User; home != "" {
		if r, err := filepath.EvalSymlinks(home); err == nil {
			home = r
		}
		if abs == filepath.Clean(home) {
			return "it is your home folder"
		}
	}
	return ""
}

// Open opens the store of project (already a root, see FindProject), in
// the homes the environment names (EnvHomes).
func Open(project string) (*Store, error) { return EnvHomes().Open(project) }

// Open opens the store of project in the homes h.
func (h Homes) Open(project string) (*Store, error) {
	abs, err := filepath.Abs(project)
	if err != nil {
		return nil, err
	}
	if dir, mode, ok := layout.FindStore(h.Rewind, abs); ok {
		s := &Store{Dir: dir, Project: abs, Mode: mode, Homes: h}
		if err := s.trust(); err != nil {
			return nil, err
		}
		s.closeToOthers()
		if mode == layout.ModeGlobal {
			// Best effort: the store was found; a record that cannot be brought up to
			// date now (a read-only home) is brought up to date by a later command.
			s.follow()
		}
		return s, nil
	}
	// (A store made before layers/ existed gets it at its next save.)
	return nil, fmt.Errorf("%w (%s)", ErrNoStore, abs)
}

// closeToOthers makes the store's folder, and in global mode storage/
// above it, private to its user (layout.DirMode) where an older Rewind made
// it open to all (0755, its files 0644): what is inside can then be reached
// by nobody else, whatever its own mode. It costs a stat (two in global
// mode), and a chmod once. A folder it may not change (not the user's)
// stays as it is.
func (s *Store) closeToOthers() {
	dirs := []string{s.Dir}
	if s.Mode == layout.ModeGlobal {
		dirs = append(dirs, filepath.Dir(s.Dir))
	}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && fi.Mode().Perm()&^layout.DirMode != 0 {
			os.Chmod(d, fi.Mode().Perm()&layout.DirMode)
		}
	}
}

// ModeError is an init in one mode of a project whose store is in the other.
type ModeError struct {
	Project, Dir string
	Mode, Want   layout.Mode
}

func (e *ModeError) Error() string {
	return fmt.Sprintf("%s already has a %s-mode store at %s", e.Project, e.Mode, e.Dir)
}

// Init creates the store of project in mode, or returns the existing one.
// In project mode inside a git repository it adds the store to
// .git/info/exclude, so git never sees it (and every save checks it again:
// the repository may come later). created is false when the store already
// existed. It uses the homes the environment names (EnvHomes).
func Init(project string, mode layout.Mode) (s *Store, created bool, err error) {
	return EnvHomes().Init(project, mode)
}

// Init creates the store of project in mode in the homes h, or returns the
// existing one (see the package's Init).
func (h Homes) Init(project string, mode layout.Mode) (s *Store, created bool, err error) {
	abs, err := filepath.Abs(project)
	if err != nil {
		return nil, false, err
	}
	existing, err := h.Open(abs)
	if err == nil {
		if existing.Mode != mode {
			return existing, false, &ModeError{Project: abs, Dir: existing.Dir, Mode: existing.Mode, Want: mode}
		}
		return existing, false, existing.ensureLayout()
	}
	if !errors.Is(err, ErrNoStore) {
		return nil, false, err // (one that is not to be trusted is not made over either)
	}
	id := uuid.NewString()
	dir := filepath.Join(abs, layout.ProjectStore)
	if mode == layout.ModeGlobal {
		dir = layout.GlobalStore(h.Rewind, id)
	}
	s = &Store{Dir: dir, Project: abs, Mode: mode, Homes: h}
	if err := s.checkFolders(true); err != nil {
		return nil, false, err
	}
	if err := s.ensureLayout(); err != nil {
		return nil, false, err
	}
	if err := s.stamp(id); err != nil {
		return nil, false, err
	}
	s.closeToOthers() // (a storage/ an older Rewind made)
	// Saves add to the index, and retention plans from it (see package gc).
	gc.StartIndex(s.forGC())
	if mode == layout.ModeGlobal {
		if err := s.recordGlobal(); err != nil {
			return nil, false, err
		}
	} else if err := excludeFromGit(abs); err != nil {
		return s, true, fmt.Errorf("store created, but adding it to .git/info/exclude failed: %w", err)
	}
	return s, true, nil
}

func (s *Store) ensureLayout() error {
	for _, d := range []string{s.Dir, s.checkpointsDir(), s.layersDir(), s.stagingDir(), s.backupDir()} {
		if err := os.MkdirAll(d, layout.DirMode); err != nil {
			return fmt.Errorf("create store %s: %w", s.Dir, err)
		}
	}
	f, err := os.OpenFile(s.lockPath(), os.O_CREATE|os.O_RDWR, layout.FileMode)
	if err != nil {
		return fmt.Errorf("create store lock %s: %w", s.lockPath(), err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if s.Mode == layout.ModeProject {
		return s.guardFromClean()
	}
	return nil
}

// guardFromClean makes a project-mode store look like a repository of its own to git (an empty
// git directory: HEAD, objects/, refs/), which git clean -fdx and git stash --all leave alone
// (git clean removes a nested repository only when forced twice, -ffdx). The store is still
// inside the project: rm -rf of it, or of the project, takes the checkpoints with it — global
// mode keeps them out of reach.
func (s *Store) guardFromClean() error {
	g := filepath.Join(s.Dir, ".git")
	if fi, err := os.Lstat(filepath.Join(g, "HEAD")); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	for _, d := range []string{g, filepath.Join(g, "objects"), filepath.Join(g, "refs")} {
		if err := os.MkdirAll(d, layout.DirMode); err != nil {
			return fmt.Errorf("create store %s: %w", s.Dir, err)
		}
	}
	return durable.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), layout.FileMode)
}

// excludeFromGit adds the store folder of project (in project mode) to
// info/exclude of the git repository project lies in — for a linked
// worktree, the one its worktrees share — unless an entry there names it
// already. It reads files only, no git, so that every save can make sure:
// a repository made after the store (git init after rewind init) has the
// store out of git by the next save. Outside a repository it does nothing.
func excludeFromGit(project string) error {
	top, gitDir := gitdir.Find(project)
	if gitDir == "" {
		return nil
	}
	prefix, err := filepath.Rel(top, project)
	if err != nil {
		return err
	}
	entry := "/" + layout.ProjectStore + "/"
	if prefix != "." {
		entry = "/" + excludeEscape(filepath.ToSlash(prefix)) + entry
	}
	exclude := filepath.Join(gitdir.Common(gitDir), "info", "exclude")
	b, err := os.ReadFile(exclude)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for l := range strings.Lines(string(b)) {
		if strings.TrimSpace(l) == entry {
			return nil
		}
	}
	perm := fs.FileMode(0o644) // git's own, for a file it may have to make
	if fi, err := os.Stat(exclude); err == nil {
		perm = fi.Mode().Perm()
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	b = append(b, []byte("# Rewind's checkpoint store\n"+entry+"\n")...)
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		return err
	}
	return durable.WriteFile(exclude, b, perm)
}

// excludeEscape is path as a gitignore pattern matching it alone: its
// wildcard characters and backslashes escaped.
func excludeEscape(path string) string {
	if !strings.ContainsAny(path, `*?[\`) {
		return path
	}
	var b strings.Builder
	for _, c := range path {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (s *Store) checkpointsDir() string         { return filepath.Join(s.Dir, layout.CheckpointsDir) }
func (s *Store) stagingDir() string             { return filepath.Join(s.Dir, layout.StagingDir) }
func (s *Store) layersDir() string              { return filepath.Join(s.Dir, layout.LayersDir) }
func (s *Store) backupDir() string              { return filepath.Join(s.Dir, layout.BackupDir) }
func (s *Store) lockPath() string               { return filepath.Join(s.Dir, layout.LockFile) }
func (s *Store) checkpointDir(id string) string { return filepath.Join(s.checkpointsDir(), id) }
