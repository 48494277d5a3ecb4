package snap

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestInterruptedCreateAndRestoreReturn: cancelled at any moment, a
// snapshot or a restore returns at once with the context's error (or its
// result, when it had finished), and leaves no temporary file.
func TestInterruptedCreateAndRestoreReturn(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	genTree(t, rand.New(rand.NewSource(5)), dir, 400)
	out := t.TempDir()
	archive := filepath.Join(out, "s.tar.gz")
	create(t, dir, archive)
	for i := range 30 {
		for _, op := range []string{"create", "restore"} {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				var err error
				if op == "create" {
					_, err = createWalked(ctx, dir, CreateOptions{Out: filepath.Join(out, fmt.Sprint("c", i, ".tar.gz"))})
				} else {
					_, err = Restore(ctx, t.TempDir(), archive, RestoreOptions{})
				}
				done <- err
			}()
			time.Sleep(time.Duration(i) * 500 * time.Microsecond)
			cancel()
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Fatalf("%s cancelled: %v, want context.Canceled", op, err)
				}
			case <-time.After(2 * time.Second):
				t.Fatalf("%s cancelled after %v did not return", op, time.Duration(i)*500*time.Microsecond)
			}
		}
	}
	des, _ := os.ReadDir(out)
	for _, de := range des {
		if n := de.Name(); n[0] == '.' {
			t.Errorf("temporary file left: %s", n)
		}
	}
}
