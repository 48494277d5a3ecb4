package snap

import (
	"cmp"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// readAhead is one archive ReadAhead reads: whoever claims it first (a
// reading goroutine, or Check when it gets there first) reads it.
type readAhead struct {
	state atomic.Bool // claimed
	done  chan struct{}
	idx   archiveIndex
	err   error
}

func (a *readAhead) claim() bool { return a.state.CompareAndSwap(false, true) }

// ReadAhead has the Verifier read archives, in the order given, in
// goroutines beside the caller (one fewer than GOMAXPROCS, at least one),
// so that Check, checking snapshots in the same order, finds each read —
// or reads it itself when it gets there first. It is for checking many
// snapshots whose archives are known in advance (a store's layers): the
// archive reading is most of the work, and it spreads over the cores. Call
// stop before the Verifier is used from another goroutine or dropped; it
// ends the reading. Archives read with limits are checked by them (Check
// reads an archive with the limits of the first manifest naming it).
func (v *Verifier) ReadAhead(ctx context.Context, archives []string, limits Limits) (stop func()) {
	if v.ahead == nil {
		v.ahead = map[string]*readAhead{}
	}
	var jobs []*readAhead
	var names []string
	for _, a := range archives {
		if _, ok := v.index[a]; ok || v.ahead[a] != nil {
			continue
		}
		j := &readAhead{done: make(chan struct{})}
		v.ahead[a] = j
		jobs, names = append(jobs, j), append(names, a)
	}
	ctx, cancel := context.WithCancel(ctx)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)-1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				if j := jobs[i]; j.claim() {
					j.idx, j.err = indexArchive(ctx, names[i], limits, cmp.Or(v.limit, indexLimit))
					close(j.done)
				}
			}
		}()
	}
	return func() {
		cancel()
		wg.Wait()
		for i, j := range jobs {
			if v.ahead[names[i]] != j || !j.state.Load() {
				continue // Check took it, or no one started it: Check reads it when it needs it
			}
			delete(v.ahead, names[i])
			if j.err == nil || j.err == errTooMany { // (one cut short by stop is read again if needed)
				v.keep(names[i], j.idx, j.err)
			}
		}
	}
}
