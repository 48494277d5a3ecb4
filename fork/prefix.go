package fork

import (
	"bufio"
	"time"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/google/uuid"

	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/durable"
	"rewind.dev/jsonl"
)

// prefixWriter writes a transcript's bytes [0, offset) into a fork file, rewriting the first
// line where the dialect keeps the session's id and title there (Droid), counting the events
// it keeps and finding what the fork's title is made from.
type prefixWriter struct {
	ctx     context.Context
	dst     *os.File
	dialect *jsonl.Dialect // nil when unknown: bytes only
	from    string         // the source transcript's path
	oldID   string         // the source's session id
	newID   string
	noTitle bool
	// sourceTitle names the fork when the kept bytes hold no title (CreateOptions.SourceTitle).
	sourceTitle string
	imp         *Import // an import: ids replaced everywhere, folders rewritten, its own mark

	events       int64
	warnings     []string
	rewroteFirst bool
	replaced     []byte // the source's first line, newline included, when rewroteFirst
	firstTitle   string // the title set in the rewritten first line

	titleOnce func() (string, error) // the title base, for dialects that append a title line
}

// copyChunk is how much one kernel copy call moves before the context is checked again.
const copyChunk = 64 << 20

// fromFile copies [0, offset) of the live transcript, which has been checked to hold the
// checkpointed prefix. The bulk goes through io.Copy from *os.File to *os.File, which Go turns
// into copy_file_range(2): the kernel copies (or reflinks, on filesystems that share extents)
// without the bytes passing through this process. Counting the kept events and finding the
// title base read the source at the same time, in other goroutines.
func (w *prefixWriter) fromFile(src *os.File, offset int64) error {
	if w.replacesAll() {
		return w.fromFileReplacing(src, offset)
	}
	var consumed int64
	if w.rewritesFirstLine() {
		head := make([]byte, min(offset, firstLineLimit))
		if _, err := src.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read transcript %s: %w", w.from, err)
		}
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			if _, err := w.write(append(w.rewriteFirst(head[:i]), '\n')); err != nil {
				return fmt.Errorf("write fork: %w", err)
			}
			consumed = int64(i) + 1
		}
	}

	var (
		wg        sync.WaitGroup
		countErr  error
		titleBase string
		titleErr  error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The title scan reads the whole prefix in order: the events are counted from its
		// reads, and the bytes it did not read (none, when it reads them all) after it.
		tee := &countingReaderAt{ra: io.NewSectionReader(src, 0, offset)}
		if w.findsTitle() {
			titleBase, titleErr = w.findTitleBase(tee, offset)
		}
		w.events, countErr = countEvents(w.ctx, tee.ra, tee.seen, offset, &tee.c)
	}()
	copyErr := w.kernelCopy(src, consumed, offset)
	var syncErr error
	if copyErr == nil {
		w.syncBehind(&wg, &syncErr)
	}
	wg.Wait()
	w.titleOnce = func() (string, error) { return titleBase, titleErr }
	if copyErr != nil {
		return copyErr
	}
	if syncErr != nil {
		return fmt.Errorf("sync fork: %w", syncErr)
	}
	if countErr != nil {
		return fmt.Errorf("count events in %s: %w", w.from, countErr)
	}
	if offset > 0 {
		last := make([]byte, 1)
		if _, err := src.ReadAt(last, offset-1); err != nil {
			return fmt.Errorf("read transcript %s: %w", w.from, err)
		}
		if _, err := w.write(trailingNewline(last[0], offset)); err != nil {
			return fmt.Errorf("write fork: %w", err)
		}
	}
	return nil
}

// syncBehind syncs what the fork holds so far while the prefix is still being read for its
// events and title: the disk takes the copied bytes while this process reads them, and the
// sync in Commit, after the title line, has only that line left to write. Its error, in *err
// once wg is done, fails the fork (a failed fsync may not be reported again).
func (w *prefixWriter) syncBehind(wg *sync.WaitGroup, err *error) {
	if *err = durable.Fault("sync", w.dst.Name()); *err != nil {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		*err = durable.Sync(w.dst)
	}()
}

// fromFileReplacing copies [0, offset) of the live transcript through the session-id replacer
// (Codex, Gemini, Copilot: the old id appears in many lines). The bytes pass through this
// process, so the kernel copy is given up; the ids have the same length, so every offset of the
// fork is the source's.
func (w *prefixWriter) fromFileReplacing(src *os.File, offset int64) error {
	r, err := newIDReplacer(w.dst, w.oldID, w.newID)
	if err != nil {
		return err
	}
	var counter eventCounter
	in := io.TeeReader(ctxio.Reader{Ctx: w.ctx, R: io.NewSectionReader(src, 0, offset)}, &counter)
	if err := durable.Fault("write", w.dst.Name()); err != nil {
		return fmt.Errorf("write fork: %w", err)
	}
	if _, err := io.Copy(r, in); err != nil {
		return fmt.Errorf("copy transcript %s into the fork: %w", w.from, err)
	}
	if err := r.flush(); err != nil {
		return fmt.Errorf("write fork: %w", err)
	}
	w.events = counter.done()
	if offset > 0 {
		last := make([]byte, 1)
		if _, err := src.ReadAt(last, offset-1); err != nil {
			return fmt.Errorf("read transcript %s: %w", w.from, err)
		}
		if _, err := w.write(trailingNewline(last[0], offset)); err != nil {
			return fmt.Errorf("write fork: %w", err)
		}
	}
	return w.afterCopy()
}

// afterCopy finds the title base in what was written, for dialects that append a title line.
func (w *prefixWriter) afterCopy() error {
	if !w.findsTitle() {
		return nil
	}
	size, err := w.dst.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	base, err := w.findTitleBase(io.NewSectionReader(w.dst, 0, size), size)
	w.titleOnce = func() (string, error) { return base, err }
	return nil
}

func (w *prefixWriter) replacesAll() bool {
	return w.dialect != nil && (w.dialect.Fork.ReplaceID == "all_lines" || w.imp != nil) && w.oldID != "" && w.oldID != w.newID
}

// mark is the fork's title made from base: the dialect's fork prefix, or an import's mark.
func (w *prefixWriter) mark(base string) string {
	if w.imp != nil && base != "" {
		return w.imp.Prefix + base
	}
	return markTitle(w.dialect, base)
}

// kernelCopy copies src [from, to) to the end of dst in chunks, checking the context between.
func (w *prefixWriter) kernelCopy(src *os.File, from, to int64) error {
	if _, err := src.Seek(from, io.SeekStart); err != nil {
		return fmt.Errorf("seek transcript %s: %w", w.from, err)
	}
	for off := from; off < to; {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if err := durable.Fault("write", w.dst.Name()); err != nil {
			return fmt.Errorf("copy transcript %s into the fork: %w", w.from, err)
		}
		n, err := io.Copy(w.dst, &io.LimitedReader{R: src, N: min(copyChunk, to-off)})
		if err != nil {
			return fmt.Errorf("copy transcript %s into the fork: %w", w.from, err)
		}
		if n == 0 {
			return fmt.Errorf("transcript %s ended at %d while copying up to %d", w.from, off, to)
		}
		off += n
	}
	return nil
}

// fromSnapshots inflates the checkpoint transcripts up to offset into the fork, checking the
// streamed bytes against the checkpoint (long enough, the cut at a line end, the hashes).
func (w *prefixWriter) fromSnapshots(paths []string, cp Checkpoint) error {
	r, err := OpenSnapshots(paths)
	if err != nil {
		return err
	}
	defer r.Close()
	rec := newWindowRecorder(jsonl.HashWindow)
	var counter eventCounter
	br := bufio.NewReaderSize(io.TeeReader(ctxio.Reader{Ctx: w.ctx, R: io.LimitReader(r, cp.Offset)}, io.MultiWriter(rec, &counter)), 1<<20)
	if w.rewritesFirstLine() {
		line, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			first := w.rewriteFirst(line[:len(line)-1])
			if w.imp != nil { // pi's header names the session's folder too
				first = (&folderRewriter{fields: w.dialect.Fork.CwdFields, from: w.imp.From, to: w.imp.To}).rewrite(first)
			}
			if _, err := w.write(append(first, '\n')); err != nil {
				return fmt.Errorf("write fork: %w", err)
			}
		case errors.Is(err, io.EOF), errors.Is(err, bufio.ErrBufferFull):
			if _, err := w.write(line); err != nil {
				return fmt.Errorf("write fork: %w", err)
			}
		default:
			return err
		}
	}
	if err := durable.Fault("write", w.dst.Name()); err != nil {
		return fmt.Errorf("write fork: %w", err)
	}
	var dst io.Writer = w.dst
	var rep *idReplacer
	if w.replacesAll() {
		if rep, err = newIDReplacer(w.dst, w.oldID, w.newID); err != nil {
			return err
		}
		dst = rep
	}
	var mv *folderRewriter
	if w.imp != nil {
		mv = &folderRewriter{w: dst, fields: w.dialect.Fork.CwdFields, from: w.imp.From, to: w.imp.To}
		dst = mv
	}
	if _, err := br.WriteTo(dst); err != nil {
		return fmt.Errorf("inflate snapshot into the fork: %w", err)
	}
	if mv != nil {
		if err := mv.flush(); err != nil {
			return fmt.Errorf("write fork: %w", err)
		}
	}
	if rep != nil {
		if err := rep.flush(); err != nil {
			return fmt.Errorf("write fork: %w", err)
		}
	}
	if rec.total < cp.Offset {
		return &SnapshotError{Offset: cp.Offset, Short: true, Held: rec.total}
	}
	if reason, err := cp.mismatch(rec, cp.Offset); err != nil || reason != "" {
		if err == nil {
			err = errors.New(reasonText(reason))
		}
		return &SnapshotError{Offset: cp.Offset, Err: err}
	}
	if last := rec.last(); len(last) > 0 {
		if _, err := w.write(trailingNewline(last[len(last)-1], cp.Offset)); err != nil {
			return fmt.Errorf("write fork: %w", err)
		}
	}
	w.events = counter.done()
	return w.afterCopy()
}

func (w *prefixWriter) method() string {
	if w.dialect == nil {
		return ""
	}
	return w.dialect.Title.Fork.Method
}

// appendsTitle: the fork ends with a line of its own, carrying its title (Claude's
// custom-title), or in a tree dialect pointing at the line its conversation ends at (pi's
// session_info, also without a title).
func (w *prefixWriter) appendsTitle() bool {
	return w.method() == "append_line" && (!w.noTitle || w.dialect.Tree != nil)
}

// findsTitle: the title is made from the kept bytes (an appended line's, a sidecar's such as
// Copilot's workspace.yaml name, or an index line's such as Codex's session_index.jsonl).
func (w *prefixWriter) findsTitle() bool {
	return w.appendsTitle() || !w.noTitle && w.method() == "sidecar" || w.indexesTitle()
}

// indexesTitle: the fork's title goes into the agent's index of session names (Codex's
// session_index.jsonl), not into the fork.
func (w *prefixWriter) indexesTitle() bool {
	return w.method() == "index_line" && !w.noTitle
}

// rewritesFirstLine: the first line holds the session's title (Droid) or its id where only the
// first line names the session (pi's header).
func (w *prefixWriter) rewritesFirstLine() bool {
	return w.method() == "rewrite_first_line" || w.dialect != nil && w.dialect.Fork.ReplaceID == "first_line"
}

// findTitleBase reads the kept bytes for what the title is made from.
func (w *prefixWriter) findTitleBase(ra io.ReaderAt, size int64) (string, error) {
	t, err := jsonl.New(w.from, ra, size, w.dialect)
	if err != nil {
		return "", err
	}
	return titleBase(w.ctx, t, w.sourceTitle)
}

// rewriteFirst rewrites the header line of a dialect that keeps the session there (Droid's
// session_start): its id becomes the fork's when it was the session's id (the file's name),
// and its title gets the fork prefix. A line it cannot rewrite is kept as it was, with a warning.
func (w *prefixWriter) rewriteFirst(line []byte) []byte {
	d := w.dialect
	set := map[string]string{}
	if f := d.Fork.SessionField; f != "" && d.Fork.ReplaceID == "first_line" && !strings.Contains(f, ".") {
		if id, ok := stringField(line, f); ok && id == w.oldID {
			set[f] = w.newID
		}
	}
	field := d.Title.Fork.Field
	if !w.noTitle && field != "" && w.method() == "rewrite_first_line" {
		if old, ok := stringField(line, field); ok && old != "" {
			w.firstTitle = w.mark(old)
			set[field] = w.firstTitle
		} else {
			w.warnings = append(w.warnings, fmt.Sprintf("fork title not set: the first line has no %s", field))
		}
	}
	if len(set) == 0 {
		return line
	}
	out, _, err := setStringFields(jsonl.Clean(line), set)
	if err != nil {
		w.warnings = append(w.warnings, "first line not rewritten: "+err.Error())
		w.firstTitle = ""
		return line
	}
	w.rewroteFirst = true
	w.replaced = append(append([]byte(nil), line...), '\n')
	return out
}

// titleLine returns the fork's title and, for dialects that carry it in an appended line
// (Claude's custom-title, pi's session_info), that line. leaf is the line a tree dialect's
// conversation ends at.
func (w *prefixWriter) titleLine(leaf string) (title string, line []byte, err error) {
	switch {
	case w.method() == "rewrite_first_line":
		return w.firstTitle, nil, nil
	case w.findsTitle() && w.titleOnce != nil:
		if !w.noTitle {
			base, err := w.titleOnce()
			if err != nil {
				return "", nil, err
			}
			if base == "" {
				return "", nil, errors.New("the kept transcript has neither a title nor a prompt to name the fork by")
			}
			title = w.mark(base)
		}
		if w.method() == "sidecar" {
			return title, nil, nil // written into the sidecar (copySidecars)
		}
		line, _, err = w.dialect.ForkTitleLine(title, w.newID, map[string]string{
			"parent_id": leaf, "entry_id": newEntryID(), "timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		})
		if err != nil {
			return "", nil, err
		}
		return title, line, nil
	}
	return "", nil, nil
}

// newEntryID is a new id for a line the fork adds: 8 hex digits, as pi's entry ids.
func newEntryID() string {
	return strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
}

// leafOf is the line a tree dialect's fork ends at: the cut's given leaf, else the id of the
// last line before the cut.
func (w *prefixWriter) leafOf(given string) (string, error) {
	if given != "" || w.dialect == nil || w.dialect.Tree == nil {
		return given, nil
	}
	size, err := w.dst.Seek(0, io.SeekCurrent)
	if err != nil {
		return "", err
	}
	r := jsonl.NewReverseReader(io.NewSectionReader(w.dst, 0, size), size)
	for {
		l, err := r.Prev()
		if errors.Is(err, io.EOF) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if id := dottedString(l.Data, w.dialect.Tree.ID); id != "" {
			return id, nil
		}
	}
}

// write writes b to the fork (through the fault seam).
func (w *prefixWriter) write(b []byte) (int, error) {
	if err := durable.Fault("write", w.dst.Name()); err != nil {
		return 0, err
	}
	return w.dst.Write(b)
}
