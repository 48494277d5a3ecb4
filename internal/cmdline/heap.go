package cmdline

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// BoundHeap sets how a tool's heap is collected: let it grow well past
// what is live before collecting (GOGC 400: a run is short), within the
// soft limit soft while what is live fits well under it. A run whose live
// heap nears or outgrows soft (a tree of hundreds of thousands of files)
// would otherwise collect without pause and free little — a restore of a
// 230,000-file tree spent a third of its CPU so, a walk of it a quarter —
// so the limit is never less than a quarter above the live heap, measured
// after each collection. stop ends the following (for tests; a tool's run
// just ends).
func BoundHeap(soft int64) (stop func()) {
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(soft)
	var stopped atomic.Bool
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	afterEachGC(func() bool {
		if stopped.Load() {
			return false
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(heapLimit(soft, int64(sample[0].Value.Uint64())))
		}
		return true
	})
	return func() { stopped.Store(true) }
}

// heapLimit is the soft memory limit for a live heap of live bytes.
func heapLimit(soft, live int64) int64 {
	return max(soft, live+live/4)
}

// gcTick is an object whose cleanup tells that a collection ran; large
// enough not to share a block with other small objects (which would keep
// it alive).
type gcTick struct{ _ [64]byte }

// afterEachGC calls fn, in the runtime's finalizer goroutine, after each
// garbage collection, until it returns false.
func afterEachGC(fn func() bool) {
	runtime.SetFinalizer(new(gcTick), func(*gcTick) {
		if fn() {
			afterEachGC(fn)
		}
	})
}
