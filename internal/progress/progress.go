// Package progress counts work as it goes, for a caller to show while it runs: the files and
// bytes a snapshot reads or a restore writes, the checkpoints gc deletes or validate checks. The
// work finds its Counter in its context (as net/http/httptrace carries its hooks), one per
// Unit, so that a store operation that also snapshots counts each in its own.
package progress

import (
	"context"
	"sync/atomic"
	"time"
)

// Counter is one piece of work's counts, updated atomically as it goes. Each piece of work
// starts them again from zero (Begin), at Began (Unix nanoseconds). Where it knows how much it
// has to do, it sets Total and TotalBytes (Expect): a caller can then show a share done and the
// time left. Elsewhere the totals are 0. A nil *Counter counts nothing.
type Counter struct {
	Done  atomic.Int64 // files, or checkpoints, done
	Bytes atomic.Int64 // bytes done (0 where the work counts no bytes)

	Total      atomic.Int64
	TotalBytes atomic.Int64
	Began      atomic.Int64
}

// Unit is what a Counter counts.
type Unit int

const (
	Files       Unit = iota + 1 // a snapshot's or a restore's files and bytes
	Checkpoints                 // the checkpoints gc or validate goes through
)

type key struct{ u Unit }

// With returns a context under which work counts its u in c.
func With(ctx context.Context, u Unit, c *Counter) context.Context {
	return context.WithValue(ctx, key{u}, c)
}

// From is the Counter of u that ctx carries, or nil.
func From(ctx context.Context, u Unit) *Counter {
	c, _ := ctx.Value(key{u}).(*Counter)
	return c
}

// Begin starts the count of a new piece of work, its size not known yet: the counts go back
// to zero.
func (c *Counter) Begin() {
	if c == nil {
		return
	}
	c.Began.Store(time.Now().UnixNano())
	c.Total.Store(0)
	c.TotalBytes.Store(0)
	c.Done.Store(0)
	c.Bytes.Store(0)
}

// Expect tells the work's size, once it is known: n more items of bytes more bytes than it
// has counted so far.
func (c *Counter) Expect(n, bytes int64) {
	if c == nil {
		return
	}
	c.Total.Store(c.Done.Load() + n)
	c.TotalBytes.Store(c.Bytes.Load() + bytes)
}

// Add counts n items of bytes bytes done.
func (c *Counter) Add(n, bytes int64) {
	if c == nil {
		return
	}
	c.Done.Add(n)
	c.Bytes.Add(bytes)
}
