//go:build unix

package snap

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPrefetchNeverWaitsOnAFIFO: a FIFO put where the walk saw a file is
// opened without waiting for a writer, so the prefetch (and the restore
// behind it) never hangs; a queue past its room drops files rather than
// stall the walk.
func TestPrefetchNeverWaitsOnAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "f"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	os.WriteFile(filepath.Join(dir, "g"), []byte("g"), 0o644)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pf := newPrefetch(r, 0)
	if pf == nil {
		t.Skip("no prefetch on this system")
	}
	done := make(chan struct{})
	go func() {
		for range 4 * prefetchAhead { // (more than it has room for: never blocks)
			pf.add(&Entry{Path: "f", Kind: KindFile, Size: 1})
			pf.add(&Entry{Path: "g", Kind: KindFile, Size: 1})
		}
		pf.stop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the prefetch waits on a FIFO")
	}
}
