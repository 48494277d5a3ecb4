package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"

	"github.com/klauspost/pgzip"

	"rewind.dev/fork"
	"rewind.dev/internal/durable"
	"rewind.dev/jsonl"
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
func (s *Store) captureTranscript(ctx context.Context, dir, path, agent, session string, k *checker) (*Transcript, error) {
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
	tr := &Transcript{Agent: agent, OriginalPath: path, SessionID: session, Cursor: cur}
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
	if err := writeGzip(filepath.Join(dir, TranscriptFile), ctxReader{ctx, io.NewSectionReader(t.ReaderAt(), from, cur.ByteOffsetEnd-from)}); err != nil {
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
func (s *Store) transcriptBase(t *jsonl.Transcript, path string, k *checker) (*Checkpoint, int) {
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
		if k.checkParts(c, partChat) != nil {
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

// ctxReader reads from r until ctx is done: copying a large transcript
// stops within a buffer of an interrupt.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// writeGzip writes r gzipped as a new file in a staging folder.
func writeGzip(name string, r io.Reader) error {
	return durable.Write(name, 0o644, func(w io.Writer) error {
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
// first: inflated and concatenated they are the transcript's bytes
// [0, c.Transcript.Cursor.ByteOffsetEnd).
func (s *Store) TranscriptChain(c *Checkpoint) ([]string, error) {
	var chain []string
	seen := map[string]bool{}
	for cur := c; ; {
		if cur.Transcript == nil || cur.Transcript.Snapshot == "" {
			return nil, fmt.Errorf("checkpoint %s holds no transcript", cur.ID)
		}
		chain = append([]string{filepath.Join(cur.Dir, cur.Transcript.Snapshot)}, chain...)
		if cur.Transcript.Base == "" {
			return chain, nil
		}
		if seen[cur.Transcript.Base] {
			return nil, fmt.Errorf("checkpoint %s: transcript chain loops", c.ID)
		}
		seen[cur.Transcript.Base] = true
		next, err := s.Load(cur.Transcript.Base)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: its transcript builds on %s, which is gone: %w", c.ID, cur.Transcript.Base, err)
		}
		cur = next
	}
}

// openTranscript streams c's transcript bytes from its chain.
func (s *Store) openTranscript(c *Checkpoint) (io.ReadCloser, error) {
	chain, err := s.TranscriptChain(c)
	if err != nil {
		return nil, err
	}
	r, err := fork.OpenSnapshots(chain)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: transcript: %w", c.ID, err)
	}
	return r, nil
}

// verifyTranscript inflates c's transcript and checks its length and the
// cursor's hashes.
func (s *Store) verifyTranscript(ctx context.Context, c *Checkpoint) error {
	r, err := s.openTranscript(c)
	if err != nil {
		return err
	}
	defer r.Close()
	end := c.Transcript.Cursor.ByteOffsetEnd
	head := sha256.New()
	var n int64
	tail := make([]byte, 0, jsonl.HashWindow)
	buf := make([]byte, 256*1024)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := r.Read(buf)
		if m > 0 {
			b := buf[:m]
			if n < jsonl.HashWindow {
				k := min(int64(m), jsonl.HashWindow-n)
				head.Write(b[:k])
			}
			n += int64(m)
			tail = append(tail, b...)
			if len(tail) > jsonl.HashWindow {
				tail = append(tail[:0], tail[len(tail)-jsonl.HashWindow:]...)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("transcript does not inflate: %w", err)
		}
	}
	if n != end {
		return fmt.Errorf("transcript holds %d bytes, its cursor says %d", n, end)
	}
	if got := hex.EncodeToString(head.Sum(nil)); got != c.Transcript.Cursor.PrefixSHA256 {
		return fmt.Errorf("transcript's first bytes differ from its cursor's hash")
	}
	ts := sha256.Sum256(tail)
	if got := hex.EncodeToString(ts[:]); got != c.Transcript.Cursor.TailSHA256 {
		return fmt.Errorf("transcript's last bytes differ from its cursor's hash")
	}
	return nil
}
