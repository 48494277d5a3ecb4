package store

import (
	"context"
	"sync/atomic"
)

// Progress counts, as they go, the checkpoints gc deletes and validate
// checks, out of how many, for a caller to show while the work runs. The
// counters are updated atomically.
type Progress struct {
	Done  atomic.Int64
	Total atomic.Int64
}

type progressKey struct{}

// WithProgress returns a context under which GC and Validate count their
// work in p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// progressFrom is the Progress ctx carries, or nil; its methods do nothing
// on nil.
func progressFrom(ctx context.Context) *Progress {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	return p
}

func (p *Progress) begin(total int) {
	if p != nil {
		p.Total.Store(int64(total))
	}
}

func (p *Progress) add(n int) {
	if p != nil {
		p.Done.Add(int64(n))
	}
}
