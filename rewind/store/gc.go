package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"rewind.dev/internal/fileid"
	"rewind.dev/rewind/store/gc"
)

// GCOptions is a retention policy to apply once (see gc.Options).
type GCOptions = gc.Options

// GCResult says what gc removed (or would remove) and what it freed (see
// gc.Result).
type GCResult = gc.Result

// Unremovable is a checkpoint gc may not remove (see gc.Unremovable).
type Unremovable = gc.Unremovable

// forGC is the store as gc sees it.
func (s *Store) forGC() gc.Store {
	return gc.Store{
		Store: s.checks(),
		IDs:   s.IDs,
		List:  s.List,
		InReach: func(n int) (map[string]bool, error) {
			h, err := s.History()
			if err != nil {
				return nil, err
			}
			if n <= 0 {
				n = UndoReach
			}
			return h.inReach(n), nil
		},
		WriteMetadata: writeMetadata,
	}
}

// GC deletes old checkpoints by the policy, under the store's lock (see
// gc.Run): never pinned ones, never the backups undo-restore and redo need
// within UndoReach, nothing a checkpoint that stays might still need.
func (s *Store) GC(ctx context.Context, o GCOptions) (*GCResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return gc.Run(ctx, s.forGC(), o)
}

// ApplyRetention runs the configured policy within budget, counted from
// started, and records what it removed in hook-state.json; call it under
// the lock.
func (s *Store) ApplyRetention(ctx context.Context, budget time.Duration, started time.Time) (*GCResult, error) {
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	age, err := ParseAge(cfg.Retention.MaxAge)
	if err != nil {
		return nil, fmt.Errorf("config retention.max_age: %w", err)
	}
	res, err := gc.Run(ctx, s.forGC(), GCOptions{Keep: cfg.Retention.MaxCheckpoints, MaxAge: age, MaxBytes: cfg.Retention.MaxBytes, Budget: budget, Started: started})
	if err != nil {
		return res, err
	}
	hs := s.HookState()
	hs.SinceRetention = 0
	hs.LastRetentionAt = time.Now().UTC()
	hs.LastRetentionFreed = res.FreedBytes
	hs.LastRetentionCount = len(res.Removed)
	return res, s.SetHookState(hs)
}

// DiskUse is the bytes the store takes, hard links counted once.
func (s *Store) DiskUse() int64 {
	seen := map[uint64]bool{}
	var n int64
	filepath.WalkDir(s.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if ino := fileid.Inode(fi); ino != 0 { // 0: unknown (Windows), every file counts
			if seen[ino] {
				return nil
			}
			seen[ino] = true
		}
		n += fi.Size()
		return nil
	})
	return n
}
