package store

import (
	"context"
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
//   - Elsewhere, the store is copied into <destination>.partial-<id> (hard links kept: a snapshot
//     and its layer are one file), synced, and renamed into place; the source is still the
//     store until it is renamed aside (<source>.moved-<id>), the move's one commit; then the
//     renamed source is removed. A killed copy leaves a .partial-<id> folder that the next
//     move removes and starts again; a killed removal leaves a .moved-<id> folder it finishes
//     removing. Their names carry the store's id (store.json), so only what a move of this
//     store made is removed.

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
// Run again after a killed move, it finishes it: whichever store the project finds is the store,
// and what the killed move left (a partial copy, the source set aside, a stale whole copy) goes.
func (s *Store) Move(ctx context.Context, to layout.Mode) (*Store, *MoveResult, error) {
	if to != layout.ModeGlobal && to != layout.ModeProject {
		return nil, nil, fmt.Errorf("no such mode %q: project or global", to)
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
	dst := &Store{Project: s.Project, Mode: to, LockWait: s.LockWait, Waiting: s.Waiting, Homes: s.Homes}
	if to == layout.ModeGlobal {
		dst.Dir = layout.GlobalStore(s.Homes.Rewind, rec.ID)
	} else {
		dst.Dir = filepath.Join(s.Project, layout.ProjectStore)
	}
	s.tidyMoves(rec.ID)
	res := &MoveResult{Type: "store_move", Project: s.Project, From: s.Dir, To: dst.Dir, Mode: to}
	if to == s.Mode {
		res.To = s.Dir
		return s, res, nil
	}
	if err := dst.checkFolders(true); err != nil {
		return nil, nil, err
	}
	if _, err := os.Lstat(dst.Dir); err == nil {
		// A whole copy a killed move made: s is still the store (the project finds it first),
		// so the copy may be behind it. It goes, and the move starts again.
		if other, err := readStoreRecord(dst.path(layout.StoreFile)); err != nil || other.ID != rec.ID {
			return nil, nil, fmt.Errorf("move the store of %s: %s exists already, and is another store; move it aside first", s.Project, dst.Dir)
		}
		if err := os.RemoveAll(dst.Dir); err != nil {
			return nil, nil, fmt.Errorf("remove the stale copy %s of a killed move: %w", dst.Dir, err)
		}
	}
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
	partial, aside := dst.Dir+".partial-"+rec.ID, s.Dir+".moved-"+rec.ID
	err = durable.FaultOr("rename", dst.Dir, func() error { return os.Rename(s.Dir, dst.Dir) })
	switch {
	case err == nil:
		durable.SyncDir(filepath.Dir(dst.Dir))
		durable.SyncDir(filepath.Dir(s.Dir))
	case errors.Is(err, syscall.EXDEV):
		res.Copied = true
		if err := copyStore(ctx, s.Dir, partial); err != nil {
			os.RemoveAll(partial)
			return nil, nil, fmt.Errorf("copy the store to %s: %w", dst.Dir, err)
		}
		if err := os.Rename(partial, dst.Dir); err != nil {
			os.RemoveAll(partial)
			return nil, nil, fmt.Errorf("move the store to %s: %w", dst.Dir, err)
		}
		durable.SyncDir(filepath.Dir(dst.Dir))
		// The commit (to global; to project, the rename above was): the source is set aside,
		// so that the copy is the store the project finds.
		if err := os.Rename(s.Dir, aside); err != nil {
			return nil, nil, fmt.Errorf("set the old store %s aside: %w", s.Dir, err)
		}
		durable.SyncDir(filepath.Dir(s.Dir))
	default:
		return nil, nil, fmt.Errorf("move the store to %s: %w", dst.Dir, err)
	}
	// Moved. What follows tidies up; the store is whole whatever of it is not done, and the
	// next move finishes it (tidyMoves).
	os.RemoveAll(aside)
	if err := s.Homes.register(rec.ID, dst.Dir); err != nil {
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

// tidyMoves removes what a killed move of store id left: a partial copy, a source set aside
// (their names carry the id), and, beside the store s is, a whole copy of it in the other
// mode, which the project does not find while s is there — so s is ahead of it.
func (s *Store) tidyMoves(id string) {
	global := layout.GlobalStore(s.Homes.Rewind, id)
	local := filepath.Join(s.Project, layout.ProjectStore)
	for _, d := range []string{global, local} {
		os.RemoveAll(d + ".partial-" + id)
		os.RemoveAll(d + ".moved-" + id)
	}
	other := global
	if s.Mode == layout.ModeGlobal {
		other = local // (never there: the project would have found it first)
	}
	if other == s.Dir {
		return
	}
	if r, err := readStoreRecord(filepath.Join(other, layout.StoreFile)); err == nil && r.ID == id {
		os.RemoveAll(other)
		if s.Mode == layout.ModeProject {
			s.dropGlobalRecords()
		}
	}
	if s.Mode == layout.ModeGlobal {
		os.Remove(filepath.Dir(local)) // .agent, when nothing else is in it
	}
}

// dropGlobalRecords removes the records that name s's global id for its project.
func (s *Store) dropGlobalRecords() {
	id := s.storeID()
	if idx := layout.ProjectIndex(s.Homes.Rewind, s.Project); layout.ReadStoreID(idx) == id {
		os.Remove(idx)
	}
	if gd := gitdir.Of(s.Project); gd != "" {
		if m := filepath.Join(gd, layout.GitMark); layout.ReadStoreID(m) == id {
			os.Remove(m)
		}
	}
}

// copyStore copies the store folder src to dst (which must not exist), file by file, durably,
// keeping the hard links between its files (a checkpoint's snapshot is its layer's archive)
// and its files' modes; symlinks and other kinds of file are refused (a store holds none).
func copyStore(ctx context.Context, src, dst string) error {
	if err := os.Mkdir(dst, layout.DirMode); err != nil {
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
