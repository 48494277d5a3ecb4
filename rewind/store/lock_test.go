package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLockSaysWhoHoldsItAndGivesUp: waiting for a busy store says after a
// second who holds the lock, and gives up after a bounded time
// (Store.LockWait) with an error naming the holder; with a deadline (a
// hook's) it gives up well inside it. It sets no environment, so it runs
// beside the others: TestLockWaitFromTheEnvironment holds
// REWIND_LOCK_WAIT to the same bound.
func TestLockSaysWhoHoldsItAndGivesUp(t *testing.T) {
	t.Parallel()
	s := project(t)
	held, err := s.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	me := fmt.Sprintf("pid %d", os.Getpid())

	var told []string
	waiter := &Store{Dir: s.Dir, Project: s.Project, Mode: s.Mode, Homes: s.Homes, LockWait: 2 * time.Second, Waiting: func(h string) { told = append(told, h) }}
	start := time.Now()
	_, err = waiter.Lock(ctx)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "busy") || !strings.Contains(err.Error(), me) {
		t.Fatalf("err = %v, want a busy store held by %s", err, me)
	}
	if took < 2*time.Second || took > 4*time.Second {
		t.Errorf("gave up after %v, want about 2s", took)
	}
	if len(told) != 1 || !strings.Contains(told[0], me) {
		t.Errorf("told %q while waiting, want once, naming %s", told, me)
	}

	waiter.LockWait = DefaultLockWait
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start = time.Now()
	if _, err := waiter.Lock(c); err == nil {
		t.Fatal("took a held lock")
	}
	if took := time.Since(start); took > 1700*time.Millisecond {
		t.Errorf("with 2s to its deadline, gave up after %v: not well inside it", took)
	}
}

// TestLockWaitFromTheEnvironment: without Store.LockWait, REWIND_LOCK_WAIT
// bounds the wait for a busy store; unset or not a duration,
// DefaultLockWait does.
func TestLockWaitFromTheEnvironment(t *testing.T) {
	s := project(t)
	held, err := s.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	t.Setenv("REWIND_LOCK_WAIT", "100ms")
	waiter := &Store{Dir: s.Dir, Project: s.Project, Mode: s.Mode, Homes: s.Homes}
	start := time.Now()
	if _, err := waiter.Lock(ctx); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("err = %v, want a busy store", err)
	}
	if took := time.Since(start); took < 100*time.Millisecond || took > 2*time.Second {
		t.Errorf("gave up after %v, want about 100ms", took)
	}
	for _, v := range []string{"", "soon", "-1s"} {
		t.Setenv("REWIND_LOCK_WAIT", v)
		if got := lockWait(); got != DefaultLockWait {
			t.Errorf("REWIND_LOCK_WAIT=%q waits %v, want %v", v, got, DefaultLockWait)
		}
	}
}
