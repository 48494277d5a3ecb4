package snap

import (
	"context"
	"sync/atomic"
)

// Progress counts, as they go, the files and bytes a snapshot reads into its
// archive and a restore writes (stages) into the tree, for a caller to show
// while the work runs. The counters are updated atomically.
type Progress struct {
	Files atomic.Int64
	Bytes atomic.Int64
}

type progressKey struct{}

// WithProgress returns a context under which Create, CreateFromTree,
// CreateOver and Restore count their work in p (as net/http/httptrace
// carries its hooks).
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// progressFrom is the Progress ctx carries, or nil; add on nil does nothing.
func progressFrom(ctx context.Context) *Progress {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	return p
}

func (p *Progress) add(bytes int64) {
	if p != nil {
		p.Files.Add(1)
		p.Bytes.Add(bytes)
	}
}
