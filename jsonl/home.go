package jsonl

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"rewind.dev/internal/fileid"
	"rewind.dev/internal/layout"
)

// AgentHome is the agent's own folder, as its manifest says (its environment variable when
// set, else its folder below the user's home).
func (d *Dialect) AgentHome() (string, error) {
	if d.Agent == nil {
		return "", fmt.Errorf("dialect %s names no folder of its own", d.Name)
	}
	user, err := os.UserHomeDir()
	if err != nil {
		user = ""
	}
	home := d.Agent.HomeDir(user, os.Getenv)
	if home == "" {
		return "", fmt.Errorf("the folder of %s: %w", d.Name, cmp.Or(err, errors.New("no home folder")))
	}
	return home, nil
}

// SessionFolders are the folders that hold the agent's transcripts.
func (d *Dialect) SessionFolders() ([]string, error) {
	if d.Agent == nil {
		return nil, fmt.Errorf("dialect %s names no folder of its own", d.Name)
	}
	user, err := os.UserHomeDir()
	if err != nil {
		user = ""
	}
	out := d.Agent.SessionDirs(user, os.Getenv)
	if len(out) < len(d.Agent.Folders.Sessions) {
		return nil, fmt.Errorf("the session folders of %s: %w", d.Name, cmp.Or(err, errors.New("no home folder")))
	}
	return out, nil
}

// ForeignPathError is a transcript path, read from data Rewind did not get from the user (a
// hook payload, a store file, a bundle), that Rewind refuses to read or write: it does not
// lie in a folder where the agent keeps its sessions, or is not a regular file of the user's.
type ForeignPathError struct {
	Path   string
	Agent  string // "" when the agent is not known
	Reason string
}

func (e *ForeignPathError) Error() string {
	who := "any agent's"
	if e.Agent != "" {
		who = e.Agent + "'s"
	}
	return fmt.Sprintf("transcript %s is not used: %s (a transcript named by a hook or a store file must be a file of yours in %s session folders)", e.Path, e.Reason, who)
}

// CheckTranscriptPath reports whether path may be read, or written beside, as a transcript of
// agent when the path came from data rather than from the user: a hook payload, session.json,
// a checkpoint's metadata. Such a path must be absolute and clean, and lie — its symlinks
// resolved — inside one of the agent's session folders (any known agent's when agent is "" or
// unknown); when it exists it must be a regular file owned by the user. Without this a file
// that came with a cloned repository could name ~/.ssh/id_ed25519 as its transcript. A path
// the user gives on the command line needs no such check.
func CheckTranscriptPath(agent, path string) error {
	bad := func(reason string) error { return &ForeignPathError{Path: path, Agent: agent, Reason: reason} }
	if path == "" || !filepath.IsAbs(path) || filepath.Clean(path) != path || layout.HasControl(path) {
		return bad("it is not a clean absolute path")
	}
	var dialects []*Dialect
	if d, err := LookupDialect(agent); err == nil {
		dialects = []*Dialect{d}
	} else {
		dialects = Dialects()
	}
	real := resolvePath(path)
	inside := false
	for _, d := range dialects {
		folders, err := d.SessionFolders()
		if err != nil {
			continue
		}
		for _, f := range folders {
			if within(resolvePath(f), real) {
				inside = true
			}
		}
	}
	if !inside {
		return bad("it lies outside the agent's session folders")
	}
	return checkFile(agent, path, real)
}

// CheckTranscriptFile is CheckTranscriptPath for a transcript the user named, wherever it
// lies: when it exists it must be a regular file (its symlinks resolved) owned by the user.
func CheckTranscriptFile(agent, path string) error {
	if path == "" || !filepath.IsAbs(path) {
		return &ForeignPathError{Path: path, Agent: agent, Reason: "it is not an absolute path"}
	}
	return checkFile(agent, path, resolvePath(filepath.Clean(path)))
}

// checkFile checks path's file, at real with its symlinks resolved.
func checkFile(agent, path, real string) error {
	bad := func(reason string) error { return &ForeignPathError{Path: path, Agent: agent, Reason: reason} }
	fi, err := os.Lstat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // not written yet (Claude Code's, at a session's start)
	case err != nil:
		return bad(err.Error())
	case !fi.Mode().IsRegular():
		return bad("it is not a regular file")
	case !fileid.Mine(fi):
		return bad("it belongs to another user")
	}
	return nil
}

// within reports whether p lies strictly inside folder dir (both clean and absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// resolvePath is p with its symlinks resolved; for a path that does not exist yet, its
// nearest existing folder's are, and the rest kept.
func resolvePath(p string) string {
	rest := ""
	for dir := p; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
