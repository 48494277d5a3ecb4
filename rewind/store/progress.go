package store

import (
	"context"

	"rewind.dev/internal/progress"
)

// Progress counts, as they go, the checkpoints gc deletes and validate checks, out of how
// many, for a caller to show while the work runs.
type Progress = progress.Counter

// WithProgress returns a context under which GC and Validate count their work in p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return progress.With(ctx, progress.Checkpoints, p)
}

// progressFrom is the Progress ctx carries, or nil (which counts nothing).
func progressFrom(ctx context.Context) *Progress {
	return progress.From(ctx, progress.Checkpoints)
}
