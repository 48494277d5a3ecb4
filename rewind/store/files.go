package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
)

// Version is the version field of every JSON file the store writes. Readers
// tolerate unknown fields.
const Version = 1

// writeJSON replaces name with v as indented JSON, durably (see durable.Create for flags).
func writeJSON(name string, v any, perm fs.FileMode, flags ...durable.Flag) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(name, append(b, '\n'), perm, flags...)
}

// LastSession reads session.json: the agent session the last hook
// recorded (zero when none has).
//
// Its fields are data: an agent Rewind does not know, a session id that is
// not one, or a transcript outside that agent's session folders is an
// error, and the session returned holds none of them.
func (s *Store) LastSession() (layout.Session, error) {
	var v layout.Session
	if err := layout.ReadJSON(s.path(layout.SessionFile), &v); err != nil {
		return layout.Session{}, err
	}
	bad := func(err error) (layout.Session, error) {
		return layout.Session{}, fmt.Errorf("%s: %w", s.path(layout.SessionFile), err)
	}
	if v.Agent != "" {
		if _, err := jsonl.LookupDialect(v.Agent); err != nil {
			return bad(err)
		}
	}
	if v.SessionID != "" && !layout.ValidSessionID(v.SessionID) {
		return bad(fmt.Errorf("session id %q is not an agent's", v.SessionID))
	}
	if v.TranscriptPath != "" {
		if err := jsonl.CheckTranscriptPath(v.Agent, v.TranscriptPath); err != nil {
			return bad(err)
		}
	}
	return v, nil
}

// SetLastSession records the agent session a hook saw in session.json;
// call it under the lock.
func (s *Store) SetLastSession(v layout.Session) error {
	v.Version = Version
	v.UpdatedAt = time.Now().UTC()
	return writeJSON(s.path(layout.SessionFile), v, layout.FileMode)
}

// HookState reads hook-state.json. A corrupt file reads as empty: it only
// holds counters, and a hook must never fail over it.
func (s *Store) HookState() layout.HookState {
	var v layout.HookState
	if err := layout.ReadJSON(s.path(layout.HookStateFile), &v); err != nil {
		return layout.HookState{}
	}
	return v
}

// SetHookState writes hook-state.json; call it under the lock. It is not
// synced (durable.NoSync): it holds counters and times, and an older copy, or
// none, after a power cut costs at most one checkpoint the interval would
// have skipped, a retention run sooner or later than due, or a notice to a
// rewound session not given (or given again). The hook's hot path saves two
// fsyncs.
func (s *Store) SetHookState(v layout.HookState) error {
	v.Version = Version
	return writeJSON(s.path(layout.HookStateFile), v, layout.FileMode, durable.NoSync)
}

func (s *Store) path(name string) string { return s.Dir + "/" + name }

// moveAside moves a file Rewind made into transcript-backup/ (never
// deleting it: the user may have chatted in the fork since), where it is
// private as everything in the store is. It returns the new path, "" when
// the file is already gone.
func (s *Store) moveAside(p string) (string, error) {
	if !fileExists(p) {
		return "", nil
	}
	return s.keepAside(p, filepath.Base(p), true)
}

// keepAside puts a copy of p into transcript-backup/ under a new name that
// starts with the time and ends in base — moved when move is set, copied
// otherwise — with the store's file mode, and returns its path. It never
// replaces a file already there.
func (s *Store) keepAside(p, base string, move bool) (string, error) {
	stamp := time.Now().UTC().Format("20060102_150405")
	for n := 0; ; n++ {
		dst := filepath.Join(s.backupDir(), stamp+"-"+base)
		if n > 0 {
			dst = filepath.Join(s.backupDir(), fmt.Sprintf("%s.%d-%s", stamp, n, base))
		}
		if fileExists(dst) {
			continue
		}
		// Neither a hard link nor the copy replaces an existing file: no
		// backup is lost to a name taken in the same second.
		if move {
			err := os.Link(p, dst)
			if errors.Is(err, os.ErrExist) {
				continue
			}
			if err == nil {
				// (p too is the file until it is removed: narrower, never wider)
				if err := os.Chmod(dst, layout.FileMode); err != nil {
					os.Remove(dst)
					return "", fmt.Errorf("keep %s aside: %w", p, err)
				}
				durable.SyncDir(s.backupDir())
				return dst, os.Remove(p)
			}
		}
		err := copyFile(p, dst, layout.FileMode, durable.NoReplace)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("keep %s aside: %w", p, err)
		}
		if move {
			return dst, os.Remove(p)
		}
		return dst, nil
	}
}

// copyFile copies src to dst, durably, with mode perm (durable.Copy: an APFS clone on
// macOS, copy_file_range on Linux).
func copyFile(src, dst string, perm fs.FileMode, flags ...durable.Flag) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return durable.Copy(dst, perm, in, flags...)
}

// modeOf is the permission bits of the file at p, or otherwise when there
// is none: the mode a file Rewind puts back beside p takes, so that it is
// no more readable than p.
func modeOf(p string, otherwise fs.FileMode) fs.FileMode {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return otherwise
	}
	return fi.Mode().Perm()
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// exists reports whether there is a file at p.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
