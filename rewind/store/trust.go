package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/google/uuid"

	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/fileid"
	"rewind.dev/internal/layout"
)

// A store's files steer what Rewind reads and writes: session.json names a transcript to copy,
// config.json what a checkpoint leaves out, a checkpoint's metadata a transcript to cut. So a
// store is used only when this user's Rewind made it. Every store holds store.json, naming it
// by a random id, and Rewind's home records each store it made (layout.Registry): a store that
// came with a cloned repository, an archive of a project or another user's folder names an id
// this home does not hold, and is refused before any of its files is read. The store's
// folders must be real folders, not symlinks, and the user's; in project mode git must track
// nothing in it (a store committed to a repository arrives with every clone and pull).

// storeRecord is a store's store.json, and the registry's entry for it.
type storeRecord struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Path    string `json:"path,omitempty"` // the registry's: where the store was last opened
}

// UntrustedStoreError is a store Rewind refuses to use: Reason says why, Fix how to start
// clean (or, for one of the user's own, how to adopt it).
type UntrustedStoreError struct {
	Dir    string
	Reason string
	Fix    string
	// Unknown: the store's own folders pass, but this home did not make it ('rewind init
	// --trust' may adopt it).
	Unknown bool
}

func (e *UntrustedStoreError) Error() string {
	return fmt.Sprintf("the checkpoint store %s is not used: %s", e.Dir, e.Reason)
}

// trust checks that s was made by this user's Rewind (see above), adopting a store made before
// stores were registered. It reads nothing else of the store.
func (s *Store) trust() error {
	if err := s.checkFolders(false); err != nil {
		return err
	}
	untrusted := func(reason, fix string) error {
		return &UntrustedStoreError{Dir: s.Dir, Reason: reason, Fix: fix}
	}
	aside := s.asideHint()
	rec, err := readStoreRecord(s.path(layout.StoreFile))
	if errors.Is(err, fs.ErrNotExist) {
		return s.adopt(false)
	}
	if err != nil {
		return untrusted(err.Error(), aside)
	}
	reg, err := readStoreRecord(s.Homes.registryEntry(rec.ID))
	if errors.Is(err, fs.ErrNotExist) {
		return &UntrustedStoreError{Dir: s.Dir, Unknown: true,
			Reason: "your Rewind did not make it (its id is not in " + layout.Registry(s.Homes.Rewind) + "): it came with the project, or from another machine or user",
			Fix:    aside + "; if it is yours, from another machine, 'rewind init --trust' adopts it"}
	}
	if err != nil {
		return untrusted(err.Error(), aside)
	}
	if reg.Path != s.Dir {
		// Moved or copied with its project: still one this user's Rewind made. A copy (the
		// store is still where the registry saw it) gets an id of its own, so that two copies
		// do not take turns at one entry; a moved one keeps its id.
		if there, err := readStoreRecord(filepath.Join(reg.Path, layout.StoreFile)); err == nil && there.ID == rec.ID {
			return s.stamp("")
		}
		return s.Homes.register(rec.ID, s.Dir)
	}
	return nil
}

// asideHint says how to set an untrusted store aside and start clean.
func (s *Store) asideHint() string {
	return fmt.Sprintf("move it aside (mv %s %s.untrusted) and run 'rewind init' to start a store of your own", cmdline.ShellQuote(s.Dir), cmdline.ShellQuote(s.Dir))
}

// checkFolders checks that the store's folders (in project mode .agent and .agent/rewind) are
// real folders of the user's, not symlinks that would lead its writes elsewhere; with missing,
// one that is not there yet passes (a store about to be made).
func (s *Store) checkFolders(missing bool) error {
	folders := []string{s.Dir}
	if s.Mode == layout.ModeProject {
		folders = []string{filepath.Dir(s.Dir), s.Dir} // .agent, .agent/rewind
	}
	for _, f := range folders {
		fi, err := os.Lstat(f)
		var reason, fix string
		switch {
		case missing && errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("open store %s: %w", s.Dir, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			reason, fix = f+" is a symlink", "make it a folder of its own, or "+s.asideHint()
		case !fi.IsDir():
			reason, fix = f+" is not a folder", s.asideHint()
		case !fileid.Mine(fi):
			uid, _ := fileid.Owner(fi)
			reason, fix = fmt.Sprintf("%s belongs to another user (uid %d)", f, uid), "run Rewind as the user who owns it, or "+s.asideHint()
		default:
			continue
		}
		return &UntrustedStoreError{Dir: s.Dir, Reason: reason, Fix: fix}
	}
	return nil
}

// adopt registers a store made before stores carried store.json: one that git tracks none of,
// and that was last changed before this Rewind first recorded a store (registrySince). A store
// without an id that appeared later cannot be one of this user's Rewind's, which gives every
// store it makes an id: it came from elsewhere (an archive of a project).
func (s *Store) adopt(anyTime bool) error {
	if s.Mode == layout.ModeProject {
		if tracked := gitTracked(s.Project, s.Dir); tracked != "" {
			return &UntrustedStoreError{Dir: s.Dir, Reason: "git tracks " + tracked + ": the store came with the repository",
				Fix: fmt.Sprintf("remove it from the repository (git rm -r --cached %s), move it aside, and run 'rewind init'", cmdline.ShellQuote(layout.ProjectStore))}
		}
	}
	if !anyTime {
		since, err := s.Homes.registrySince()
		if err != nil {
			return fmt.Errorf("open store %s: %w", s.Dir, err)
		}
		fi, err := os.Lstat(s.Dir)
		if err != nil {
			return fmt.Errorf("open store %s: %w", s.Dir, err)
		}
		if changed := fileid.ChangeTime(fi); since != 0 && changed > since {
			return &UntrustedStoreError{Dir: s.Dir, Unknown: true,
				Reason: "it has no id, and appeared after your Rewind began to record the stores it makes: it came with the project",
				Fix:    s.asideHint() + "; if it is yours, from another machine, 'rewind init --trust' adopts it"}
		}
	}
	return s.stamp("")
}

// registrySince is when this user's Rewind first recorded a store (the change time of the
// registry's marker, made then): 0 where the system keeps no change times.
func (h Homes) registrySince() (int64, error) {
	reg := layout.Registry(h.Rewind)
	name := filepath.Join(reg, ".since")
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(reg, layout.DirMode); err != nil {
			return 0, err
		}
		f, cerr := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, layout.FileMode)
		if cerr != nil {
			return 0, cerr
		}
		f.Close()
		fi, err = os.Lstat(name)
	}
	if err != nil {
		return 0, err
	}
	return fileid.ChangeTime(fi), nil
}

// stamp gives s the id id in store.json (a new one when ""), and registers it.
func (s *Store) stamp(id string) error {
	if id == "" {
		id = uuid.NewString()
	}
	b, _ := json.Marshal(storeRecord{Version: Version, ID: id})
	if err := durable.WriteFile(s.path(layout.StoreFile), append(b, '\n'), layout.FileMode); err != nil {
		return fmt.Errorf("record the store %s: %w", s.Dir, err)
	}
	return s.Homes.register(id, s.Dir)
}

// Trust adopts the store of project as the user's own ('rewind init --trust'): a store made by
// the user's Rewind elsewhere (another machine, another account's home), which Open refuses
// because this home does not know it. Git must track none of it, and its folders must be the
// user's; it gets a new id. It uses the homes the environment names
// (EnvHomes).
func Trust(project string) (*Store, error) { return EnvHomes().Trust(project) }

// Trust is the package's Trust in the homes h.
func (h Homes) Trust(project string) (*Store, error) {
	abs, err := filepath.Abs(project)
	if err != nil {
		return nil, err
	}
	dir, mode, ok := layout.FindStore(h.Rewind, abs)
	if !ok {
		return nil, fmt.Errorf("%w (%s)", ErrNoStore, abs)
	}
	s := &Store{Dir: dir, Project: abs, Mode: mode, Homes: h}
	err = s.trust()
	var ue *UntrustedStoreError
	if err == nil || !errors.As(err, &ue) {
		return s, err
	}
	if !ue.Unknown {
		return nil, err // a symlink, another user's: not for adopting
	}
	if err := s.adopt(true); err != nil {
		return nil, err
	}
	return s, nil
}

// readStoreRecord reads a store.json or registry entry: a regular file of the user's whose id
// is a UUID.
func readStoreRecord(name string) (storeRecord, error) {
	var r storeRecord
	fi, err := os.Lstat(name)
	if err != nil {
		return r, err
	}
	if !fi.Mode().IsRegular() || !fileid.Mine(fi) {
		return r, fmt.Errorf("%s is not a regular file of yours", name)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &r); err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := uuid.Parse(r.ID); err != nil || len(r.ID) != 36 {
		return r, fmt.Errorf("%s: id %q is not a store id", name, r.ID)
	}
	return r, nil
}

// registryEntry is the registry's file for store id (a UUID).
func (h Homes) registryEntry(id string) string {
	return filepath.Join(layout.Registry(h.Rewind), id+".json")
}

// register records in Rewind's home that store id, at dir, is the user's.
func (h Homes) register(id, dir string) error {
	if _, err := h.registrySince(); err != nil { // (the first store recorded marks the time)
		return fmt.Errorf("register the store %s: %w", dir, err)
	}
	b, _ := json.Marshal(storeRecord{Version: Version, ID: id, Path: dir})
	if err := durable.WriteFile(h.registryEntry(id), append(b, '\n'), layout.FileMode); err != nil {
		return fmt.Errorf("register the store %s: %w", dir, err)
	}
	return nil
}

// gitTracked is the first file under dir that git tracks in the repository holding project,
// "" when none does (or there is no repository, or no git).
func gitTracked(project, dir string) string {
	out, err := exec.Command("git", "-c", "core.fsmonitor=false", "-C", project, "ls-files", "-z", "--", dir).Output()
	if err != nil || len(out) == 0 {
		return ""
	}
	first, _, _ := bytes.Cut(out, []byte{0})
	return string(first)
}
