package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/fileid"
	"rewind.dev/internal/gitdir"
	"rewind.dev/internal/layout"
)

// Moving a store between the modes ('rewind store move') never leaves the project without one
// whole store that FindStore finds, whatever instant the move is killed at:
//
//   - Where the source and the destination share a file system, the store folder is renamed:
//     one atomic step. The records that lead to a global store are written before it (they
//     lead nowhere until the folder is there, and FindStore tries the project's folder first).
//   - Elsewhere, the store is copied into <destination>.partial (hard links kept: a snapshot
//     and its layer are one file), synced, and renamed into place; the source is still the
//     store until it is renamed aside (<source>.moved), the move's one commit; then the
//     renamed source is removed. A killed copy leaves a .partial folder that the next move
//     removes and starts again; a killed removal leaves a .moved folder it finishes removing.
//     Each holds a marker (moveMarker) naming the move, so only what a move made is removed.

// moveMarker is the file a move writes first in the folders it makes or sets aside.
const moveMarker = ".rewind-move"

// MoveResult is what Move did.
type MoveResult struct {
	Type    string      `json:"type"` // "store_move"
	Project string      `json:"project"`
	From    string      `json:"from"`
	To      string      `json:"to"`
	Mode    layout.Mode `json:"mode"`
	Copied  bool        `json:"copied"` // across file systems, not renamed
}

// Move moves s into mode to and returns the store there. It holds the store's lock throughout.
func (s *Store) Move(ctx context.Context, to layout.Mode) (*Store, *MoveResult, error) {
	if to != layout.ModeGlobal && to != layout.ModeProject {
		return nil, nil, fmt.Errorf("no such mode %q: project or global", to)
	}
	if to == s.Mode {
		return s, &MoveResult{Type: "store_move", Project: s.Project, From: s.Dir, To: s.Dir, Mode: to}, nil
	}
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer l.Unlock()
	rec, err := readStoreRecord(s.path(layout.StoreFile))
	if err != nil {
		return nil, nil, fmt.Errorf("store %s: %w", s.Dir, err)
	}
	dst := &Store{Project: s.Project, Mode: to, LockWait: s.LockWait, Waiting: s.Waiting}
	if to == layout.ModeGlobal {
		dst.Dir = layout.GlobalStore(layout.UserHome(), rec.ID)
	} else {
		dst.Dir = filepath.Join(s.Project, layout.ProjectStore)
	}
	if err := dst.checkFolders(true); err != nil {
		return nil, nil, err
	}
	if _, err := os.Lstat(dst.Dir); err == nil {
		return nil, nil, fmt.Errorf("move the store of %s: %s exists already; move it aside first", s.Project, dst.Dir)
	}
	res := &MoveResult{Type: "store_move", Project: s.Project, From: s.Dir, To: dst.Dir, Mode: to}
	if err := os.MkdirAll(filepath.Dir(dst.Dir), layout.DirMode); err != nil {
		return nil, nil, fmt.Errorf("move the store of %s: %w", s.Project, err)
	}
	if to == layout.ModeGlobal {
		// Written first: they lead nowhere until the store is there.
		if err := durable.WriteFile(s.path(layout.ProjectFile), []byte(s.Project+"\n"), layout.FileMode); err != nil {
			return nil, nil, err
		}
		if err := dst.recordPaths(); err != nil {
			return nil, nil, err
		}
	}
	partial, aside := dst.Dir+".partial", s.Dir+".moved"
	removeMade(partial) // (a killed move's)
	err = durable.FaultOr("rename", dst.Dir, func() error { return os.Rename(s.Dir, dst.Dir) })
	switch {
	case err == nil:
		durable.SyncDir(filepath.Dir(dst.Dir))
		durable.SyncDir(filepath.Dir(s.Dir))
	case errors.Is(err, syscall.EXDEV):
		res.Copied = true
		if err := copyStore(ctx, s.Dir, partial); err != nil {
			removeMade(partial)
			return nil, nil, fmt.Errorf("copy the store to %s: %w", dst.Dir, err)
		}
		os.Remove(filepath.Join(partial, moveMarker))
		if err := os.Rename(partial, dst.Dir); err != nil {
			removeMade(partial)
			return nil, nil, fmt.Errorf("move the store to %s: %w", dst.Dir, err)
		}
		durable.SyncDir(filepath.Dir(dst.Dir))
		// The commit: the source is set aside, so that the copy is the store FindStore finds.
		if err := writeMarker(s.Dir); err != nil {
			return nil, nil, err
		}
		if err := os.Rename(s.Dir, aside); err != nil {
			os.Remove(filepath.Join(s.Dir, moveMarker))
			return nil, nil, fmt.Errorf("set the old store %s aside: %w", s.Dir, err)
		}
		durable.SyncDir(filepath.Dir(s.Dir))
	default:
		return nil, nil, fmt.Errorf("move the store to %s: %w", dst.Dir, err)
	}
	// Moved. What follows tidies up; the store is whole whatever of it is not done.
	removeMade(aside)
	if err := register(rec.ID, dst.Dir); err != nil {
		return dst, res, err
	}
	if to == layout.ModeProject {
		os.Remove(dst.path(layout.ProjectFile))
		s.dropGlobalRecords()
		if err := excludeFromGit(s.Project); err != nil {
			return dst, res, fmt.Errorf("store moved, but adding it to .git/info/exclude failed: %w", err)
		}
	} else {
		os.Remove(filepath.Dir(s.Dir)) // .agent, when nothing else is in it
	}
	return dst, res, nil
}

// dropGlobalRecords removes the records that name s's global id for its project.
func (s *Store) dropGlobalRecords() {
	id := s.storeID()
	if idx := layout.ProjectIndex(layout.UserHome(), s.Project); layout.ReadStoreID(idx) == id {
		os.Remove(idx)
	}
	if gd := gitdir.Of(s.Project); gd != "" {
		if m := filepath.Join(gd, layout.GitMark); layout.ReadStoreID(m) == id {
			os.Remove(m)
		}
	}
}

// writeMarker marks dir as a folder a move made or set aside.
func writeMarker(dir string) error {
	b, _ := json.Marshal(map[string]any{"version": Version, "pid": os.Getpid()})
	return durable.WriteFile(filepath.Join(dir, moveMarker), append(b, '\n'), layout.FileMode)
}

// removeMade removes dir when a move made it (it holds the marker): a killed move's copy, or a
// source it set aside. Anything else there is left alone.
func removeMade(dir string) {
	if fi, err := os.Lstat(filepath.Join(dir, moveMarker)); err == nil && fi.Mode().IsRegular() {
		os.RemoveAll(dir)
	}
}

// copyStore copies the store folder src to dst (which must not exist), file by file, durably,
// keeping the hard links between its files (a checkpoint's snapshot is its layer's archive)
// and its files' modes; symlinks and other kinds of file are refused (a store holds none).
func copyStore(ctx context.Context, src, dst string) error {
	if err := os.Mkdir(dst, layout.DirMode); err != nil {
		return err
	}
	if err := writeMarker(dst); err != nil {
		return err
	}
	linked := map[uint64]string{} // inode → its first copy
	var dirs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return nil
		}
		out := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			dirs = append(dirs, out)
			return os.Mkdir(out, fi.Mode().Perm()|0o700)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file", p)
		}
		if ino := fileid.Inode(fi); ino != 0 && fileid.Links(fi) > 1 {
			if first, ok := linked[ino]; ok {
				return os.Link(first, out)
			}
			linked[ino] = out
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		f, err := durable.Create(out, fi.Mode().Perm(), durable.Staged)
		if err != nil {
			return err
		}
		defer f.Abort()
		if _, err := io.Copy(f, in); err != nil {
			return err
		}
		return f.Commit()
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := durable.SyncDir(dirs[i]); err != nil {
			return err
		}
	}
	return durable.SyncDir(dst)
}
