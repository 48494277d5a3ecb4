package snap

import (
	"context"
	"sync/atomic"
	"time"
)

// Progress counts, as they go, the files and bytes a snapshot reads into its
// archive and a restore writes (stages) into the tree, for a caller to show
// while the work runs. The counters are updated atomically.
//
// Each piece of work (a snapshot, a restore) starts the counts again from
// zero, at Began (Unix nanoseconds). Where it knows how much it has to do
// (a snapshot once the walk has found what it reads; a restore over a
// manifest once it has planned what to write), it sets TotalFiles and
// TotalBytes: a caller can then show a share done and the time left.
// Elsewhere the totals are 0.
type Progress struct {
	Files atomic.Int64
	Bytes atomic.Int64

	TotalFiles atomic.Int64
	TotalBytes atomic.Int64
	Began      atomic.Int64
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

// begin starts the count of a new piece of work (a snapshot's files read,
// a restore's written), its size not known yet: the counts go back to zero.
func (p *Progress) begin() {
	if p == nil {
		return
	}
	p.Began.Store(time.Now().UnixNano())
	p.TotalFiles.Store(0)
	p.TotalBytes.Store(0)
	p.Files.Store(0)
	p.Bytes.Store(0)
}

// expect tells the work's size, once it is known: files more files of
// bytes more bytes than it has counted so far.
func (p *Progress) expect(files, bytes int64) {
	if p == nil {
		return
	}
	p.TotalBytes.Store(p.Bytes.Load() + bytes)
	p.TotalFiles.Store(p.Files.Load() + files)
}
