package store

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/klauspost/pgzip"

	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store/record"
	"rewind.dev/rewind/store/verify"
)

// maxTranscriptChain bounds how many checkpoints a transcript's bytes may be
// spread over; past it the next capture is written whole.
const maxTranscriptChain = 64

// captureTranscript records the transcript at path into the checkpoint being
// built in dir. When an earlier checkpoint of the same transcript still
// verifies as a prefix of the file, only the bytes appended since are kept,
// as one gzip member (concatenated members are one gzip stream); otherwise
// the whole complete data is. A transcript that does not exist yet is
// recorded with an empty cursor.
func (s *Store) captureTranscript(ctx context.Context, dir, path, agent, session string, k *verify.Checker) (*Transcript, error) {
	var d *jsonl.Dialect
	if agent != "" {
		d, _ = jsonl.LookupDialect(agent)
	}
	t, err := jsonl.Open(path, d)
	if err != nil {
		return nil, &unreadableTranscript{err}
	}
	defer t.Close()
	cur, err := t.Cursor(ctx, jsonl.CursorOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &unreadableTranscript{fmt.Errorf("transcript %s: %w", path, err)}
	}
	if t.Dialect != nil {
		agent = t.Dialect.Name
	}
	tr := &Transcript{Agent: agent, OriginalPath: path, SessionID: session, Cursor: cur,
		Named: jsonl.CheckTranscriptPath(agent, path) != nil}
	if !t.Exists() || cur.ByteOffsetEnd == 0 {
		return tr, nil
	}
	if turns, err := t.Turns(ctx, 1); err == nil && len(turns) > 0 {
		tr.LastPrompt = turns[0].Text
	}
	var from int64
	tr.Chain = 1
	if base, chain := s.transcriptBase(t, path, k); base != nil {
		bt := base.Transcript
		if bt.Cursor.ByteOffsetEnd == cur.ByteOffsetEnd {
			// Nothing appended since base: share its file, so a run of
			// prompts that add nothing (or checkpoints between prompts)
			// does not lengthen the chain.
			if err := linkOrCopy(filepath.Join(base.Dir, bt.Snapshot), filepath.Join(dir, TranscriptFile)); err != nil {
				return nil, fmt.Errorf("capture transcript %s: %w", path, err)
			}
			tr.Snapshot, tr.Base, tr.BaseOffset, tr.Chain = TranscriptFile, bt.Base, bt.BaseOffset, chain
			return tr, nil
		}
		tr.Base, tr.BaseOffset, tr.Chain = base.ID, bt.Cursor.ByteOffsetEnd, chain+1
		from = tr.BaseOffset
	}
	// From the file Open checked and opened: a path that changed since is
	// not read again.
	if err := writeGzip(filepath.Join(dir, TranscriptFile), ctxio.Reader{Ctx: ctx, R: io.NewSectionReader(t.ReaderAt(), from, cur.ByteOffsetEnd-from)}); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("capture transcript %s: %w", path, err)
	}
	tr.Snapshot = TranscriptFile
	return tr, nil
}

// realPath is a transcript's path with its symlinks resolved, so that a
// checkpoint records, and a fork goes beside, the file itself, and two
// names of one transcript are one; a path that does not exist yet keeps
// its name (with its folder's symlinks resolved, when that exists).
func realPath(p string) string {
	if p == "" {
		return p
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p))
	}
	return p
}

// unreadableTranscript is a transcript that could not be read: not a
// regular file, no permission, an I/O error.
type unreadableTranscript struct{ err error }

func (e *unreadableTranscript) Error() string { return e.err.Error() }
func (e *unreadableTranscript) Unwrap() error { return e.err }

// transcriptBase finds the newest checkpoint of the same transcript whose
// captured bytes the file still starts with, if its chain is short enough
// and whole (every file there, none known to be damaged), and the length of
// that chain.
func (s *Store) transcriptBase(t *jsonl.Transcript, path string, k *verify.Checker) (*Checkpoint, int) {
	ids, err := s.IDs()
	if err != nil {
		return nil, 0
	}
	tried := 0
	for i := len(ids) - 1; i >= 0 && tried < 16; i-- {
		c, err := s.Load(ids[i])
		if err != nil || c.Transcript == nil || c.Transcript.Snapshot == "" || c.Transcript.OriginalPath != path {
			continue
		}
		tried++
		if v, err := t.Verify(c.Transcript.Cursor); err != nil || !v.Extends {
			continue
		}
		if k.CheckParts(c, verify.Chat) != nil {
			return nil, 0 // damaged: capture the whole transcript
		}
		n := c.Transcript.Chain
		if n == 0 { // recorded before Chain was
			chain, err := s.TranscriptChain(c)
			if err != nil {
				return nil, 0
			}
			n = len(chain)
		}
		if n >= maxTranscriptChain {
			return nil, 0
		}
		return c, n
	}
	return nil, 0
}

// writeGzip writes r gzipped as a new file in a staging folder.
func writeGzip(name string, r io.Reader) error {
	return durable.Write(name, layout.FileMode, func(w io.Writer) error {
		zw, err := pgzip.NewWriterLevel(w, pgzip.BestSpeed)
		if err != nil {
			return err
		}
		if _, err := io.Copy(zw, r); err != nil {
			return err
		}
		return zw.Close()
	}, durable.Staged)
}

// TranscriptChain lists the gzip files that hold c's transcript, oldest
// first (see record.TranscriptChain).
func (s *Store) TranscriptChain(c *Checkpoint) ([]string, error) {
	return record.TranscriptChain(c, s.Load)
}

// verifyTranscript inflates c's transcript and checks its length and the
// cursor's hashes.
func (s *Store) verifyTranscript(ctx context.Context, c *Checkpoint) error {
	chain, err := s.TranscriptChain(c)
	if err != nil {
		return err
	}
	_, err = record.SumTranscript(ctx, c, chain, nil)
	return err
}
