package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"rewind.dev/internal/layout"
	"rewind.dev/snap"
)

// Version is the version field of every JSON file the store writes. Readers
// tolerate unknown fields.
const Version = 1

func writeFileAtomic(name string, data []byte) error {
	return snap.WriteFileAtomic(name, data, 0o644)
}

func writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(name, append(b, '\n'))
}

// writeJSONUnsynced replaces name with v through a temporary file and a
// rename, like writeJSON, but does not wait for the disk: for a file whose
// loss in a power cut costs nothing. A reader sees the old file or the new
// one; after a crash, possibly the old one or none.
func writeJSONUnsynced(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileUnsynced(name, append(b, '\n'))
}

// writeFileUnsynced is writeJSONUnsynced for bytes.
func writeFileUnsynced(name string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// writeStaged writes a new file in a checkpoint's staging folder and syncs
// its contents. It needs no temporary name or folder sync of its own: the
// folder is synced once and renamed into checkpoints/ only when whole, and
// cleanStaging removes whatever a killed run left in staging/.
func writeStaged(name string, write func(io.Writer) error) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// Session reads session.json (zero when absent).
func (s *Store) Session() (layout.Session, error) {
	var v layout.Session
	err := layout.ReadJSON(s.path(layout.SessionFile), &v)
	return v, err
}

// SetSession writes session.json; call it under the lock.
func (s *Store) SetSession(v layout.Session) error {
	v.Version = Version
	v.UpdatedAt = time.Now().UTC()
	return writeJSON(s.path(layout.SessionFile), v)
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
// synced: it holds counters and times, and an older copy after a power cut
// costs at most one checkpoint the interval would have skipped, or a
// retention run sooner or later than due. The hook's hot path saves two
// fsyncs.
func (s *Store) SetHookState(v layout.HookState) error {
	v.Version = Version
	return writeJSONUnsynced(s.path(layout.HookStateFile), v)
}

func (s *Store) path(name string) string { return s.Dir + "/" + name }

// moveAside moves a file Rewind made into transcript-backup/ (never
// deleting it: the user may have chatted in the fork since). It returns the
// new path, "" when the file is already gone.
func (s *Store) moveAside(p string) (string, error) {
	if !fileExists(p) {
		return "", nil
	}
	return s.keepAside(p, filepath.Base(p), true)
}

// keepAside puts a copy of p into transcript-backup/ under a new name that
// starts with the time and ends in base — moved when move is set, copied
// otherwise — and returns its path. It never replaces a file already there.
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
		if move {
			// A hard link cannot replace an existing file: no backup is lost
			// to a name taken in the same second.
			err := os.Link(p, dst)
			if errors.Is(err, os.ErrExist) {
				continue
			}
			if err == nil {
				syncPath(s.backupDir())
				return dst, os.Remove(p)
			}
		}
		if err := copyFile(p, dst); err != nil {
			return "", fmt.Errorf("keep %s aside: %w", p, err)
		}
		if move {
			return dst, os.Remove(p)
		}
		return dst, nil
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := snap.CreateAtomic(dst, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer out.Abort()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return out.Commit()
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
