package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Lock is a held store lock.
type Lock struct{ f *os.File }

// ErrBusy means another process held the store's lock for all the time a
// command could wait for it.
var ErrBusy = errors.New("the store is busy")

// DefaultLockWait bounds how long a command waits for the store's lock
// when Store.LockWait is not set.
const DefaultLockWait = time.Minute

// Lock takes the store's exclusive lock, waiting until ctx is done or
// s.LockWait (DefaultLockWait when 0) has passed. The lock file is never
// renamed or deleted, so every process locks the same inode.
func (s *Store) Lock(ctx context.Context) (*Lock, error) {
	wait := s.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	f, err := os.OpenFile(s.lockPath(), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open store lock %s: %w", s.lockPath(), err)
	}
	delay := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &Lock{f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", s.lockPath(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w: another rewind held the lock of %s for %s", ErrBusy, s.Dir, time.Since(start).Round(time.Millisecond))
			}
			return nil, fmt.Errorf("waiting for the lock of %s: %w", s.Dir, ctx.Err())
		case <-time.After(delay):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// Unlock releases the lock.
func (l *Lock) Unlock() {
	if l != nil && l.f != nil {
		syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
		l.f = nil
	}
}
