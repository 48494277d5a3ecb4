package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
)

// Lock is a held store lock.
type Lock struct{ f *os.File }

// ErrBusy means another process held the store's lock for all the time a
// command could wait for it.
var ErrBusy = errors.New("the store is busy")

// DefaultLockWait is how long Lock waits for a busy store at most, unless
// Store.LockWait or REWIND_LOCK_WAIT (a Go duration) says otherwise.
const DefaultLockWait = 30 * time.Second

// lockTell is how long Lock waits before it says who holds the lock.
const lockTell = time.Second

// Lock takes the store's exclusive lock. It waits for a busy store at most
// s.LockWait (else REWIND_LOCK_WAIT, else DefaultLockWait), and when ctx has
// a deadline — a hook's — at most three quarters of the time left, so the
// caller can still report in time; after a second it tells s.Waiting who
// holds the lock. The holder writes who it is into the lock file, which is
// never renamed or deleted, so every process locks the same inode.
func (s *Store) Lock(ctx context.Context) (*Lock, error) {
	f, err := os.OpenFile(s.lockPath(), os.O_CREATE|os.O_RDWR, layout.FileMode)
	if err != nil {
		return nil, fmt.Errorf("open store lock %s: %w", s.lockPath(), err)
	}
	start := time.Now()
	limit := s.LockWait
	if limit <= 0 {
		limit = lockWait()
	}
	if dl, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(dl)*3/4)
	}
	told := false
	delay := time.Millisecond
	for {
		err := durable.TryLock(f)
		if err == nil && !stillAt(f, s.lockPath()) {
			// The store was moved (rewind store move) while this waited: its lock
			// is another file now, and s.Dir names nothing.
			f.Close()
			return nil, fmt.Errorf("the store %s moved while this waited for it: %w", s.Dir, ErrStoreMoved)
		}
		if err == nil {
			// Who holds it, for anyone who waits: best effort.
			f.Truncate(0)
			f.WriteAt([]byte(holderLine()), 0)
			return &Lock{f}, nil
		}
		if !errors.Is(err, durable.ErrLocked) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", s.lockPath(), err)
		}
		waited := time.Since(start)
		if waited >= lockTell && !told && s.Waiting != nil {
			s.Waiting(holderOf(f))
			told = true
		}
		if waited >= limit {
			who := holderOf(f)
			f.Close()
			return nil, busy(s.Dir, who, waited)
		}
		select {
		case <-ctx.Done():
			who := holderOf(f)
			f.Close()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, busy(s.Dir, who, time.Since(start))
			}
			return nil, fmt.Errorf("waiting for the lock of %s (held by %s): %w", s.Dir, who, ctx.Err())
		case <-time.After(min(delay, limit-waited)):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// busy is ErrBusy for the store in dir, held by who for waited.
func busy(dir, who string, waited time.Duration) error {
	return fmt.Errorf("%w: store %s held by %s; gave up after %v", ErrBusy, dir, who, waited.Round(100*time.Millisecond))
}

// lockWait is DefaultLockWait, or $REWIND_LOCK_WAIT.
func lockWait() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("REWIND_LOCK_WAIT")); err == nil && d >= 0 {
		return d
	}
	return DefaultLockWait
}

// holderLine says who this process is: its pid, its command and since when.
func holderLine() string {
	cmd := filepath.Base(os.Args[0])
	if len(os.Args) > 1 {
		cmd += " " + os.Args[1]
	}
	return fmt.Sprintf("pid %d (%s, since %s)\n", os.Getpid(), cmd, time.Now().Format("15:04:05"))
}

// holderOf reads who holds the lock from the lock file.
func holderOf(f *os.File) string {
	b := make([]byte, 256)
	n, _ := f.ReadAt(b, 0)
	if line := strings.TrimSpace(string(b[:n])); line != "" {
		return line
	}
	return "another process"
}

// Unlock releases the lock.
func (l *Lock) Unlock() {
	if l != nil && l.f != nil {
		l.f.Truncate(0) // no stale holder for the next waiter to name
		durable.Unlock(l.f)
		l.f.Close()
		l.f = nil
	}
}

// ErrStoreMoved is a store that was moved to the other mode while a command waited for it.
var ErrStoreMoved = errors.New("run the command again")

// stillAt reports whether the open file f is still the file at name.
func stillAt(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}
