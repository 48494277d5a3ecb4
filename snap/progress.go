package snap

import (
	"context"

	"rewind.dev/internal/progress"
)

// Progress counts, as they go, the files and bytes a snapshot reads into its archive and a
// restore writes (stages) into the tree, for a caller to show while the work runs. A snapshot
// knows its size once the walk has found what it reads, a restore over a manifest once it has
// planned what to write: they set the totals then.
type Progress = progress.Counter

// WithProgress returns a context under which Create and Restore
// count their work in p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return progress.With(ctx, progress.Files, p)
}

// progressFrom is the Progress ctx carries, or nil (which counts nothing).
func progressFrom(ctx context.Context) *Progress {
	return progress.From(ctx, progress.Files)
}
